"""The one vLLM release voxcap's changes to vLLM were written and tested against: each change
checks it before it applies (vLLM's streaming internals are not a stable API)."""

PINNED_VLLM = "0.32.0"


def pinned_version(fix: str, check: str, log) -> str | None:
    """vLLM's version when it is PINNED_VLLM; otherwise None, with a warning on ``log`` saying
    that ``fix`` was not applied and what to ``check`` (vLLM missing or broken too)."""
    try:
        import vllm
    except Exception:  # vLLM missing or broken: nothing to patch
        log.warning("voxcap %s not applied: vLLM could not be imported", fix, exc_info=True)
        return None
    version = getattr(vllm, "__version__", "?")
    if version != PINNED_VLLM:
        log.warning("voxcap %s not applied: written for vLLM %s, this is %s (check %s)", fix,
                    PINNED_VLLM, version, check)
        return None
    return version
