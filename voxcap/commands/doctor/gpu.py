"""The NVIDIA GPU and driver: present, new enough, the CUDA build's needs."""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import asdict

from ...engine.vllm_adapter.pin import PINNED_VLLM
from .base import (
    BF16_COMPUTE,
    FAIL,
    GPU_BUILD_CUDA,
    GPU_BUILD_DRIVER,
    MIN_COMPUTE,
    OK,
    REINSTALL,
    SKIP,
    WARN,
    Check,
    Context,
    _gib,
    log,
)


def _visible_gpu_index() -> int:
    """The NVML index of the GPU vLLM uses (the first of CUDA_VISIBLE_DEVICES, if numeric)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def _torch_cuda() -> dict:
    """What PyTorch sees (only when NVML found a GPU: importing torch takes seconds)."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: torch does not import", exc_info=True)
        return {"installed": False, "error": str(exc)[:200]}
    out = {"installed": True, "version": torch.__version__, "cuda": torch.version.cuda}
    try:
        out["available"] = bool(torch.cuda.is_available())
        if out["available"]:
            props = torch.cuda.get_device_properties(0)
            out.update(device_count=torch.cuda.device_count(), name=props.name,
                       total_memory_bytes=int(props.total_memory),
                       compute_capability=f"{props.major}.{props.minor}")
    except Exception as exc:  # noqa: BLE001
        out["available"] = False
        out["error"] = str(exc)[:300]
    return out


def _cuda_tuple(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in (text or "").split(".")[:2]) or None
    except ValueError:
        return None


def check_gpu(ctx: Context, args) -> Check:
    from ... import gpu as gpu_mod
    from ...engine.vllm_adapter.platform import NO_GPU_FIX, SERVER_HINT

    gpus = [] if ctx.no_gpu() else ctx.gpus
    if not gpus:
        reason = gpu_mod.nvml_unavailable_reason()
        details: dict[str, object] = {"gpus": [], "reason": reason}
        if ctx.engine == "remote":
            return Check("gpu", "NVIDIA GPU", SKIP, "not needed: captions come from a vLLM "
                         f"server (none found here: {reason})", "", details)
        if ctx.build == "cuda":  # installed for a GPU that is not usable now: a driver problem?
            return Check("gpu", "NVIDIA GPU", FAIL, f"No NVIDIA GPU found ({reason}): vLLM's "
                         "CUDA build installed here cannot run", NO_GPU_FIX, details)
        details["server_only"] = True
        cpu = (": the vLLM installed is its CPU build, for self-checks (far slower than real "
               "time with the real model)" if ctx.build == "cpu" else "")
        return Check("gpu", "NVIDIA GPU", WARN, f"No NVIDIA GPU here ({reason}){cpu}; captions "
                     "come from a vLLM server", SERVER_HINT, details)
    driver = gpu_mod.driver_versions()
    index = _visible_gpu_index()
    gpu = next((g for g in gpus if g.index == index), gpus[0])
    ctx.gpu = gpu
    driver_cuda = driver[1] if driver else None
    details = {"nvml": gpu_mod.nvml_backend(),
               "driver_version": driver[0] if driver else None,
               "driver_cuda": driver_cuda,
               "used_index": gpu.index,
               "gpus": [dict(asdict(g), compute_capability=g.compute_capability_text)
                        for g in gpus]}
    summary = (f"{gpu.name}, {_gib(gpu.memory_total_bytes)} ({_gib(gpu.memory_used_bytes)} used), "
               f"compute capability {gpu.compute_capability_text}, load "
               f"{'n/a' if gpu.load_pct is None else f'{gpu.load_pct} %'}"
               + (f", driver {driver[0]} (CUDA {driver[1]})" if driver else ""))
    if len(gpus) > 1:
        summary += (f"; {len(gpus)} GPUs seen: the app uses GPU {gpu.index}, `voxcap serve "
                    f"--gpus {len(gpus)}` all of them")
    if ctx.engine == "remote":
        return Check("gpu", "NVIDIA GPU", SKIP, f"not needed (remote engine); found {summary}",
                     "", details)
    # findings, worst verdict first in the end: (verdict, what, fix)
    found: list[tuple[str, str, str]] = []
    cc = gpu.compute_capability
    if cc is not None and cc < MIN_COMPUTE:
        found.append((FAIL, f"too old for vLLM (needs compute capability {MIN_COMPUTE[0]}."
                      f"{MIN_COMPUTE[1]} or newer)",
                      "use a newer NVIDIA GPU, or a vLLM server (--engine remote)"))
    elif cc is not None and cc < BF16_COMPUTE:
        found.append((WARN, "no bfloat16 on this GPU, so vLLM runs the model in float16 (slower, "
                      "not tested with voxcap)",
                      "an RTX 30-series / A-series or newer GPU runs it as intended"))
    torch_info = None
    # what vLLM will see; the CPU build's PyTorch has no CUDA to report (and its import costs
    # seconds)
    if ctx.build == "cuda" or (ctx.build != "cpu" and importlib.util.find_spec("torch")):
        torch_info = _torch_cuda()
        details["torch"] = torch_info
    # the CUDA version the driver must support: the installed PyTorch's, or the GPU build's
    needs = _cuda_tuple(torch_info.get("cuda")) if ctx.build == "cuda" and torch_info else None
    needs = needs or GPU_BUILD_CUDA
    has = _cuda_tuple(driver_cuda)
    details["cuda_needed"] = ".".join(map(str, needs))
    if ctx.build == "cpu":
        found.append((WARN, "vLLM's CPU build is installed although this machine has an NVIDIA "
                      "GPU: captions run far slower than they could",
                      "reinstall with the GPU build: installer/install.sh --gpu"))
    elif has is not None and has < needs:
        found.append((FAIL, f"the driver supports CUDA {driver_cuda} but voxcap's GPU build "
                      f"(vLLM {PINNED_VLLM}, PyTorch for CUDA {details['cuda_needed']}) needs CUDA "
                      f"{details['cuda_needed']}",
                      f"update the NVIDIA driver to version {GPU_BUILD_DRIVER} or newer (Ubuntu: "
                      "`sudo ubuntu-drivers install`, then restart), or use a vLLM server"))
    elif ctx.build == "cuda" and torch_info is not None and not torch_info.get("available"):
        why = torch_info.get("error") or "torch.cuda.is_available() is False"
        fix = "reinstall voxcap (installer/install.sh); if that does not help, update the driver"
        if torch_info.get("installed") and torch_info.get("cuda") is None:
            why, fix = "the installed PyTorch is a CPU-only build", REINSTALL
        found.append((FAIL, f"PyTorch cannot use it: {why}", fix))
    if not found:
        return Check("gpu", "NVIDIA GPU", OK, summary, "", details)
    rank = {FAIL: 0, WARN: 1}
    found.sort(key=lambda f: rank[f[0]])
    return Check("gpu", "NVIDIA GPU", found[0][0],
                 summary + "; " + "; ".join(f[1] for f in found),
                 "; ".join(f[2] for f in found), details)
