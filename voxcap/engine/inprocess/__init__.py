"""The in-process engine: vLLM's AsyncLLM on a thread of this process, its feed, start-up progress
and the warm-up before the first start. May import vllm's public API; its internals via vllm_adapter."""
