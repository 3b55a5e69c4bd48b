"""What must move with each vLLM release: the plugin run in vLLM's processes, the fixes it applies
(guarded to the pinned version), vLLM's caches and build checks. The only part that touches vllm.v1."""
