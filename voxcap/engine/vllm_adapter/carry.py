"""What the token carry's two sides agree on: the front end that sends realtime chunks ahead of
their tokens (the app's engine: engine/inprocess/feed.py; vLLM's /v1/realtime server:
realtime_carry.py) and the engine core that fills the token in (patches.py)."""

TOKEN_CARRY_ENV = "VOXCAP_VLLM_TOKEN_CARRY"  # the engine core's side, off unless set
CARRY_KEY = "voxcap_carry_token"  # SamplingParams.extra_args key: "fill my first prompt token"
CARRY_AHEAD = 2  # chunks sent before the previous token is back; 1 keeps the GPU busy, 2 absorbs jitter
PLACEHOLDER_TOKEN = 0  # any valid id: the engine core replaces it before the model sees it
