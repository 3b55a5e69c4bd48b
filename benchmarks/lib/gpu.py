"""GPU utilisation sampled while a benchmark runs, through voxcap's own NVML reading."""

from __future__ import annotations

import statistics
import threading

from voxcap.gpu import list_gpus, read_gpu


class GpuSampler:
    """NVML's utilisation ("share of time a kernel ran") every ``interval`` s on a thread, the
    busiest of ``indices`` (default: every GPU) per sample; nothing where there is no NVML.
    Reusable: each ``with`` block starts a fresh set of samples."""

    def __init__(self, indices: list[int] | None = None, interval: float = 0.1) -> None:
        if indices is None:
            indices = [g.index for g in list_gpus() or []]
        self.indices, self.interval = indices, interval
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> GpuSampler:
        self.samples = []
        self._stop.clear()
        if self.indices:
            self._thread = threading.Thread(target=self._run, daemon=True, name="gpu-sampler")
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            loads = [r.load_pct for r in map(read_gpu, self.indices)
                     if r is not None and r.load_pct is not None]
            if loads:
                self.samples.append(float(max(loads)))

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def mean(self) -> float | None:
        return round(statistics.fmean(self.samples), 1) if self.samples else None
