"""The token carry through vLLM 0.32.0's own ``/v1/realtime`` server (``voxcap serve``):
``VOXCAP_VLLM_REALTIME_CARRY=1``, off unless set, and only where the engine core's token carry
(patches.py, ``VOXCAP_VLLM_TOKEN_CARRY=1``) is applied too: patches.apply_enabled applies both.

vLLM's realtime connection echoes every step's sampled token back into the session's realtime
buffer (``RealtimeConnection._run_generation`` → ``input_stream`` → ``buffer_realtime_audio``),
and the buffer builds chunk n+1's prompt from it: chunk n+1 cannot leave the API server before
chunk n's token made the round trip engine core → API server → engine core, so after every step
each session sits idle in the engine core until its next chunk comes back over ZMQ, however
early its audio arrived.

With the fix, ``OpenAIServingRealtime.transcribe_realtime`` hands the buffer placeholders
instead of the echoed tokens (``CARRY_AHEAD`` at the start, one per token that comes back, as
the in-process engine's feed does: engine/inprocess/feed.py), and every chunk goes with the
connection's sampling parameters plus ``extra_args[CARRY_KEY]``, so the engine core writes the
session's last sampled token over the placeholder when it applies the chunk (patches.py,
``carry_last_token``). A chunk whose audio is there is then queued in the engine core before the
previous step ends. Same tokens as the echo (tests/engine/vllm_adapter/test_realtime_carry.py
runs vLLM's server both ways; benchmarks/capacity.py compares every session's text).
"""

from __future__ import annotations

import logging
import os

from .carry import CARRY_AHEAD, CARRY_KEY, PLACEHOLDER_TOKEN, TOKEN_CARRY_ENV
from .pin import PINNED_VLLM, install_wrapper, installed, pinned_attr

logger = logging.getLogger("vllm.voxcap_patches")

REALTIME_CARRY_ENV = "VOXCAP_VLLM_REALTIME_CARRY"
_FLAG = "_voxcap_realtime_carry"
_SERVING = "vllm.entrypoints.speech_to_text.realtime.serving"


class CarriedTokens:
    """Stands in for the connection's token queue in ``buffer_realtime_audio``, which only
    awaits ``get()``: a placeholder for each of the first ``ahead`` chunks, then one for each
    output the connection echoes (none for an output without tokens, as the echo gives none)."""

    def __init__(self, echoed, ahead: int = CARRY_AHEAD) -> None:
        self._echoed = echoed
        self._ahead = ahead

    async def get(self) -> list[int]:
        if self._ahead > 0:
            self._ahead -= 1
            return [PLACEHOLDER_TOKEN]
        return [PLACEHOLDER_TOKEN] if await self._echoed.get() else []


def carry_sampling_params(max_tokens: int):
    """The sampling parameters ``RealtimeConnection._run_generation`` gives a session (greedy,
    ``realtime_max_tokens``, DELTA outputs), asking the engine core to carry the token."""
    from vllm.sampling_params import RequestOutputKind, SamplingParams

    return SamplingParams.from_optional(temperature=0.0, max_tokens=max_tokens,
                                        output_kind=RequestOutputKind.DELTA, skip_clone=True,
                                        extra_args={CARRY_KEY: True})


def apply(engine_core_carries: bool) -> bool:
    """Wrap OpenAIServingRealtime.transcribe_realtime (once per process) when this process's
    scheduler carries tokens (``engine_core_carries``: patches.apply_token_carry applied);
    False, with a warning, where it does not apply."""
    cls = pinned_attr("realtime carry", "voxcap/engine/vllm_adapter/realtime_carry.py against "
                      "vLLM's realtime connection and serving", logger,
                      _SERVING, "OpenAIServingRealtime")
    if cls is None:
        return False
    if not engine_core_carries:
        logger.warning("voxcap realtime carry not applied: the engine core's token carry is off "
                       "(it needs %s=1 too)", TOKEN_CARRY_ENV)
        return False
    original = cls.transcribe_realtime
    if getattr(original, _FLAG, False):
        return True  # a second plugin load in the same process
    from vllm.engine.protocol import StreamingInput

    async def transcribe_realtime(self, audio_stream, input_stream):
        params = carry_sampling_params(self.model_cls.realtime_max_tokens)
        async for chunk in original(self, audio_stream, CarriedTokens(input_stream)):
            yield StreamingInput(prompt=chunk.prompt, sampling_params=params)

    install_wrapper(cls, "transcribe_realtime", _FLAG, transcribe_realtime)
    logger.info("voxcap realtime carry applied (vLLM %s, pid %d): /v1/realtime sends chunks "
                "ahead of their tokens", PINNED_VLLM, os.getpid())
    return True


def applied() -> bool:
    return installed(logger, _SERVING, "OpenAIServingRealtime", "transcribe_realtime", _FLAG)
