"""What the NVIDIA driver says about the GPUs, through NVIDIA's management library (NVML).

No Qt and no vLLM here: the meter, the first-run dialog and the installer's checks use it.
``nvidia-ml-py`` (module ``pynvml``) talks to ``libnvidia-ml``, which comes with the driver.
Every reader returns ``None`` when that is not possible (package missing, no driver, no GPU,
an NVML error): callers show "n/a", never a made-up number.

    gpus = list_gpus()                 # None: NVML unavailable; [] never (that is None too)
    reading = read_gpu(0)              # GpuReading | None: memory used/total, load %
    reason = nvml_unavailable_reason() # why list_gpus() is None, for a message
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

_lock = threading.Lock()
_state: dict = {"tried": False, "ok": False, "reason": ""}


@dataclass(frozen=True)
class GpuReading:
    index: int
    name: str
    memory_used_bytes: int
    memory_total_bytes: int
    load_pct: int | None  # GPU utilisation over the driver's last sample period (None: n/a)

    @property
    def memory_used_gib(self) -> float:
        return self.memory_used_bytes / 2**30

    @property
    def memory_total_gib(self) -> float:
        return self.memory_total_bytes / 2**30


def _init():
    """pynvml, initialised once per process; None (and the reason kept) when unavailable."""
    with _lock:
        if not _state["tried"]:
            _state["tried"] = True
            try:
                import pynvml
            except ImportError:
                _state["reason"] = "NVIDIA's management library for Python (nvidia-ml-py) is not installed"
            else:
                try:
                    pynvml.nvmlInit()
                    if pynvml.nvmlDeviceGetCount() < 1:
                        _state["reason"] = "the NVIDIA driver reports no GPU"
                    else:
                        _state["ok"] = True
                        _state["module"] = pynvml
                except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded...
                    _state["reason"] = f"no NVIDIA driver or GPU ({_nvml_error(exc)})"
        return _state.get("module") if _state["ok"] else None


def _nvml_error(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.strip().rstrip(".")


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def nvml_unavailable_reason() -> str:
    """Why NVML gives nothing ("" when it works)."""
    _init()
    return "" if _state["ok"] else _state["reason"]


def list_gpus() -> list[GpuReading] | None:
    nvml = _init()
    if nvml is None:
        return None
    try:
        count = nvml.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001
        return None
    out = [r for r in (read_gpu(i) for i in range(count)) if r is not None]
    return out or None


def read_gpu(index: int = 0) -> GpuReading | None:
    """Memory and load of GPU ``index`` now (an NVML call of well under a millisecond)."""
    nvml = _init()
    if nvml is None:
        return None
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        mem = nvml.nvmlDeviceGetMemoryInfo(handle)
        name = _text(nvml.nvmlDeviceGetName(handle))
    except Exception:  # noqa: BLE001 - the GPU fell off the bus, driver reloaded...
        return None
    try:
        load = int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
    except Exception:  # noqa: BLE001 - not supported on some boards
        load = None
    return GpuReading(index, name, int(mem.used), int(mem.total), load)


def describe_gpus() -> str:
    """One line for a person: the GPUs, or why none is seen."""
    gpus = list_gpus()
    if not gpus:
        return f"No NVIDIA GPU found: {nvml_unavailable_reason()}."
    return "; ".join(f"NVIDIA GPU {g.index}: {g.name}, {g.memory_total_gib:.0f} GiB" for g in gpus)
