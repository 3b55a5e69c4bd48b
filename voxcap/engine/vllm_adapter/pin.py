"""The one vLLM release voxcap's changes to vLLM were written and tested against: each change
checks it before it applies (vLLM's streaming internals are not a stable API)."""

PINNED_VLLM = "0.32.0"
