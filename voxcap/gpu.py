"""What the NVIDIA driver says about the GPUs, through NVIDIA's management library (NVML).

No Qt and no vLLM here: the meter, the first-run dialog, ``voxcap doctor`` and the installer's
checks use it. NVML is ``libnvidia-ml.so.1``, which comes with the driver; it is reached through
``nvidia-ml-py`` (module ``pynvml``) when that is installed, else directly through ctypes, so
the figures are there on a machine with nothing but the driver and the standard library
(``VOXCAP_NVML=ctypes`` or ``=pynvml`` forces one way, to compare them). Every reader returns
``None`` when that is not possible (no driver, no GPU, an NVML error): callers show "n/a", never
a made-up number.

    gpus = list_gpus()                 # None: NVML unavailable; [] never (that is None too)
    reading = read_gpu(0)              # GpuReading | None: memory used/total/free, load %,
                                       #   compute capability
    reason = nvml_unavailable_reason() # why list_gpus() is None, for a message
    driver = driver_versions()         # ("570.86.15", "12.8") | None

Memory figures are what ``nvidia-smi`` shows: with drivers that have it
(``nvmlDeviceGetMemoryInfo_v2``), ``used`` excludes the memory the driver reserves for itself
(kept apart in ``memory_reserved_bytes``); with older ones, used = total - free.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict = {"tried": False, "ok": False, "reason": ""}


@dataclass(frozen=True)
class GpuReading:
    index: int
    name: str
    memory_used_bytes: int
    memory_total_bytes: int
    load_pct: int | None  # GPU utilisation over the driver's last sample period (None: n/a)
    memory_free_bytes: int | None = None  # None: n/a
    compute_capability: tuple[int, int] | None = None  # (9, 0) for an H100/H200
    memory_reserved_bytes: int = 0  # kept by the driver (in neither used nor free)

    @property
    def memory_used_gib(self) -> float:
        return self.memory_used_bytes / 2**30

    @property
    def memory_total_gib(self) -> float:
        return self.memory_total_bytes / 2**30

    @property
    def memory_free_gib(self) -> float | None:
        return None if self.memory_free_bytes is None else self.memory_free_bytes / 2**30

    @property
    def compute_capability_text(self) -> str:
        cc = self.compute_capability
        return f"{cc[0]}.{cc[1]}" if cc else "n/a"


# ------------------------------------------------------------------------- backends ----
class NvmlError(Exception):
    pass


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class _MemoryV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


_MEMORY_V2 = ctypes.sizeof(_MemoryV2) | (2 << 24)  # NVML_STRUCT_VERSION(Memory, 2)


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _CtypesNvml:
    """NVML called directly: the functions and structures of nvml.h that voxcap reads."""

    name = "ctypes"

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError:
            raise NvmlError("libnvidia-ml.so.1 not found") from None
        self.lib.nvmlErrorString.restype = ctypes.c_char_p
        init = getattr(self.lib, "nvmlInit_v2", None) or self.lib.nvmlInit
        self._check(init())

    def _check(self, rc: int) -> None:
        if rc != 0:
            try:
                text = self.lib.nvmlErrorString(rc).decode(errors="replace")
            except Exception:  # noqa: BLE001
                text = "unknown error"
            raise NvmlError(f"{text} (NVML error {rc})")

    def _fn(self, *names: str):
        for n in names:
            fn = getattr(self.lib, n, None)
            if fn is not None:
                return fn
        raise NvmlError(f"{names[0]} is not in this driver's NVML")

    def count(self) -> int:
        n = ctypes.c_uint()
        self._check(self._fn("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")(ctypes.byref(n)))
        return n.value

    def handle(self, index: int):
        h = ctypes.c_void_p()
        fn = self._fn("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")
        self._check(fn(ctypes.c_uint(index), ctypes.byref(h)))
        return h

    def device_name(self, h) -> str:
        buf = ctypes.create_string_buffer(96)
        self._check(self.lib.nvmlDeviceGetName(h, buf, ctypes.c_uint(96)))
        return buf.value.decode(errors="replace")

    def memory(self, h) -> tuple[int, int, int, int]:
        """(total, used, free, reserved) bytes."""
        try:
            m2 = _MemoryV2(version=_MEMORY_V2)
            self._check(self._fn("nvmlDeviceGetMemoryInfo_v2")(h, ctypes.byref(m2)))
            return int(m2.total), int(m2.used), int(m2.free), int(m2.reserved)
        except NvmlError:  # an older driver
            m = _Memory()
            self._check(self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)))
            return int(m.total), int(m.used), int(m.free), 0

    def load(self, h) -> int:
        u = _Utilization()
        self._check(self.lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)))
        return int(u.gpu)

    def compute_capability(self, h) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvmlDeviceGetCudaComputeCapability(
            h, ctypes.byref(major), ctypes.byref(minor)))
        return major.value, minor.value

    def driver(self) -> tuple[str, str]:
        buf = ctypes.create_string_buffer(80)
        self._check(self.lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(80)))
        cuda = ctypes.c_int()
        self._check(self._fn("nvmlSystemGetCudaDriverVersion_v2",
                             "nvmlSystemGetCudaDriverVersion")(ctypes.byref(cuda)))
        return buf.value.decode(errors="replace"), _cuda_text(cuda.value)


class _PynvmlNvml:
    """The same readings through nvidia-ml-py."""

    name = "pynvml"

    def __init__(self, pynvml) -> None:
        self.m = pynvml
        try:
            pynvml.nvmlInit()
        except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded...
            raise NvmlError(_nvml_error(exc)) from None

    def count(self) -> int:
        return int(self.m.nvmlDeviceGetCount())

    def handle(self, index: int):
        return self.m.nvmlDeviceGetHandleByIndex(index)

    def device_name(self, h) -> str:
        return _text(self.m.nvmlDeviceGetName(h))

    def memory(self, h) -> tuple[int, int, int, int]:
        version = getattr(self.m, "nvmlMemory_v2", None)
        if version is not None:
            try:
                m2 = self.m.nvmlDeviceGetMemoryInfo(h, version=version)
                return int(m2.total), int(m2.used), int(m2.free), int(m2.reserved)
            except Exception:  # noqa: BLE001 - an older driver
                _log_once("nvmlDeviceGetMemoryInfo v2")
        m = self.m.nvmlDeviceGetMemoryInfo(h)
        return int(m.total), int(m.used), int(m.free), 0

    def load(self, h) -> int:
        return int(self.m.nvmlDeviceGetUtilizationRates(h).gpu)

    def compute_capability(self, h) -> tuple[int, int]:
        major, minor = self.m.nvmlDeviceGetCudaComputeCapability(h)
        return int(major), int(minor)

    def driver(self) -> tuple[str, str]:
        version = _text(self.m.nvmlSystemGetDriverVersion())
        try:
            cuda = self.m.nvmlSystemGetCudaDriverVersion_v2()
        except Exception:  # noqa: BLE001
            cuda = self.m.nvmlSystemGetCudaDriverVersion()
        return version, _cuda_text(int(cuda))


def _cuda_text(value: int) -> str:
    """12080 -> "12.8" (NVML's CUDA_VERSION encoding)."""
    return f"{value // 1000}.{value % 1000 // 10}" if value > 0 else ""


def _open_backend():
    """The NVML backend to use, or raise NvmlError saying why there is none."""
    forced = os.environ.get("VOXCAP_NVML", "").strip().lower()
    if forced != "ctypes":
        try:
            import pynvml
        except ImportError:
            if forced == "pynvml":
                raise NvmlError("nvidia-ml-py (pynvml) is not installed") from None
        else:
            return _PynvmlNvml(pynvml)
    return _CtypesNvml()


def _init():
    """The NVML backend, initialised once per process; None (and the reason kept) when
    unavailable."""
    with _lock:
        if not _state["tried"]:
            _state["tried"] = True
            try:
                backend = _open_backend()
                if backend.count() < 1:
                    _state["reason"] = "the NVIDIA driver reports no GPU"
                else:
                    _state["ok"] = True
                    _state["module"] = backend
            except NvmlError as exc:
                _state["reason"] = f"no NVIDIA driver or GPU ({_nvml_error(exc)})"
            except Exception as exc:  # noqa: BLE001 - whatever a broken driver install raises
                _state["reason"] = f"NVML failed ({type(exc).__name__}: {_nvml_error(exc)})"
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


def nvml_backend() -> str | None:
    """"pynvml" or "ctypes": how NVML is reached (None: it is not)."""
    backend = _init()
    return backend.name if backend is not None else None


def driver_versions() -> tuple[str, str] | None:
    """(driver version, highest CUDA version the driver supports), e.g. ("570.86.15", "12.8")."""
    backend = _init()
    if backend is None:
        return None
    try:
        return backend.driver()
    except Exception:  # noqa: BLE001
        _log_once("the NVIDIA driver version")
        return None


def list_gpus() -> list[GpuReading] | None:
    backend = _init()
    if backend is None:
        return None
    try:
        count = backend.count()
    except Exception:  # noqa: BLE001
        _log_once("the GPU count")
        return None
    out = [r for r in (read_gpu(i) for i in range(count)) if r is not None]
    return out or None


def read_gpu(index: int = 0) -> GpuReading | None:
    """Memory and load of GPU ``index`` now (NVML calls of well under a millisecond)."""
    backend = _init()
    if backend is None:
        return None
    try:
        handle = backend.handle(index)
        total, used, free, reserved = backend.memory(handle)
        name = backend.device_name(handle)
    except Exception:  # noqa: BLE001 - the GPU fell off the bus, driver reloaded...
        _log_once("the GPU's memory")
        return None
    try:
        load = backend.load(handle)
    except Exception:  # noqa: BLE001 - not supported on some boards
        load = None
    try:
        cc = backend.compute_capability(handle)
    except Exception:  # noqa: BLE001
        cc = None
    return GpuReading(index, name, used, total, load, free, cc, reserved)


def visible_gpu_index() -> int:
    """NVML's index of the GPU CUDA uses as device 0 here (first of CUDA_VISIBLE_DEVICES)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def describe_gpus() -> str:
    """One line for a person: the GPUs, or why none is seen."""
    gpus = list_gpus()
    if not gpus:
        return f"No NVIDIA GPU found: {nvml_unavailable_reason()}."
    return "; ".join(f"NVIDIA GPU {g.index}: {g.name}, {g.memory_total_gib:.0f} GiB" for g in gpus)


_logged: set[str] = set()


def _log_once(what: str) -> None:
    """Log a failed NVML read with its traceback the first time (the meter polls every second)."""
    if what not in _logged:
        _logged.add(what)
        log.warning("NVML could not read %s", what, exc_info=True)
    else:
        log.debug("NVML could not read %s", what, exc_info=True)
