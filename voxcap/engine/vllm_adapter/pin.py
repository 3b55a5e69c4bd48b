"""The one vLLM release voxcap's changes to vLLM were written and tested against: each change
checks it before it applies (vLLM's streaming internals are not a stable API)."""

import importlib
import os

PINNED_VLLM = "0.32.0"


def env_on(name: str) -> bool:
    """Whether the environment switches a change on (each is off unless set)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


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


def install_wrapper(cls, name: str, flag: str, wrapper) -> None:
    """Put ``wrapper`` in place of ``cls.name``, marked with ``flag`` (so a second plugin load in
    the same process sees it) and keeping the original as ``__wrapped__``."""
    original = getattr(cls, name)
    setattr(wrapper, flag, True)
    wrapper.__wrapped__ = original
    wrapper.__doc__ = original.__doc__
    setattr(cls, name, wrapper)


def pinned_attr(fix: str, check: str, log, module: str, name: str):
    """``module.name`` of the pinned vLLM, or None with a warning on ``log`` (another version,
    or a build where it cannot be imported)."""
    if pinned_version(fix, check, log) is None:
        return None
    try:
        return getattr(importlib.import_module(module), name)
    except Exception:  # a broken or pruned build: nothing to patch
        log.warning("voxcap %s not applied: %s.%s could not be imported", fix, module, name,
                    exc_info=True)
        return None


def installed(log, module: str, name: str, method: str, flag: str) -> bool:
    """Whether ``module.name.method`` is a wrapper marked with ``flag`` (install_wrapper) in
    this process; False, with a warning on ``log``, where the class cannot be imported."""
    try:
        cls = getattr(importlib.import_module(module), name)
    except Exception:
        log.warning("vLLM's %s could not be imported", name, exc_info=True)
        return False
    return bool(getattr(getattr(cls, method, None), flag, False))
