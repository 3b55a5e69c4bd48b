"""The one answer to "does captioning fit this GPU", in the words every front end shows: the
engine's start gate, ``voxcap doctor``, the first-run dialog and Settings.

    sizing = Sizing.of(engine_settings)               # memory.Sizing(precision="auto", streams=2)
    v = verdict(model_info, sizing, read_gpu_facts())  # model_info None: the real model's shape
    v.kind, v.line, v.fix    # "fits" | "fewer_streams" | "not_free" | "too_small" | "unknown"

A choice fits when its footprint plus the start-up peak is free, counting at most 95 % of the
card (what the automatic choice uses, memory.py / precision.py); the numbers in the words are
those the decision used, so "needs" and "has" compare as the decision did.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...setting_refs import ref
from . import memory
from .memory import Sizing, choose_precision
from .precision import Choice, GpuFacts

USABLE_SHARE = 0.95  # of a card's memory that a choice may count on (precision.choose)
SERVER_FIX = ("caption through a vLLM server on a bigger GPU: run `voxcap serve` there, then "
              f"choose the vLLM server engine ({ref('use_server')})")
CLOSE_FIX = ("close programs that use the GPU (`nvidia-smi` lists them: games, other AI tools, "
             "browsers with hardware acceleration), then start again")


def read_gpu_facts(reading=None) -> GpuFacts | None:
    """What sizing needs of the GPU vLLM will use (``reading``: a gpu.GpuReading already read),
    from NVML, so no CUDA context is made just to ask; None when no NVIDIA driver answers."""
    from ... import gpu

    reading = reading if reading is not None else gpu.read_gpu(gpu.visible_gpu_index())
    if reading is None:
        return None
    free = reading.memory_free_bytes
    if free is None:  # older drivers: what is neither used nor kept by the driver
        free = reading.memory_total_bytes - reading.memory_used_bytes - reading.memory_reserved_bytes
    return GpuFacts(reading.memory_total_bytes, free, reading.compute_capability)


def usable_free_bytes(total: int, free: int) -> int:
    return min(free, int(total * USABLE_SHARE))


@dataclass(frozen=True)
class Verdict:
    kind: str  # fits, fewer_streams, not_free (not now), too_small (never), unknown (not sized)
    choice: Choice  # what would start now, or the least that would (when it does not fit)
    line: str  # for a person: what was found
    fix: str = ""  # what to do, when it does not fit

    @property
    def fits(self) -> bool:
        return self.kind in ("fits", "fewer_streams", "unknown")

    @property
    def text(self) -> str:
        """The line, and the fix where one is needed: what a dialog shows."""
        return self.line if not self.fix else f"{self.line}. Fix: {self.fix}"


def _streams(n: int) -> str:
    return "one stream" if n == 1 else f"{n} streams"


def verdict(info, sizing: Sizing, gpu: GpuFacts | None) -> Verdict:
    """Whether an engine with ``sizing`` fits ``gpu`` now, on this card at all, and the words.
    ``info``: the model folder (ModelInfo), None for the real model's shape."""
    gpu = gpu or GpuFacts()
    now = choose_precision(info, sizing, gpu)  # raises ConfigError for a precision this GPU cannot run
    total, free = gpu.total_bytes, gpu.free_bytes
    if now.need_bytes is None or total is None or free is None:
        return Verdict("unknown", now, now.line)
    if now.fits:
        return Verdict("fits" if now.streams == sizing.streams else "fewer_streams", now, now.line)
    usable, cap = usable_free_bytes(total, free), int(total * USABLE_SHARE)
    what = f"{now.label} for {_streams(now.streams)}"
    need = now.need_bytes + now.start_margin_bytes
    if need > cap:
        line = (f"{gpu.size_text} is too small: {what} needs ≈{memory.gib(need)} free to start, "
                f"and at most {memory.gib(cap)} of it can be")
        auto = _automatic(info, sizing, replace(gpu, free_bytes=gpu.total_bytes))
        if auto is not None and auto.fits:
            return Verdict("too_small", now, line, "set the precision to Automatic "
                           f"({ref('precision', 'auto')}): it starts as {auto.label} for "
                           f"{_streams(auto.streams)} on this card")
        return Verdict("too_small", now, line, SERVER_FIX)
    line = (f"{gpu.size_text} has {memory.gib(usable)} free now; {what} needs "
            f"≈{memory.gib(need)} free to start")
    auto, hint = _automatic(info, sizing, gpu), ""
    if auto is not None and auto.fits:
        hint = (f"; or set the precision to Automatic, which starts now as {auto.label} for "
                f"{_streams(auto.streams)}")
    elif auto is not None and (auto_need := auto.free_needed_bytes) is not None and auto_need < need:
        hint = (f"; or set the precision to Automatic, which needs ≈"
                f"{memory.gib(auto_need)} free ({auto.label})")
    return Verdict("not_free", now, line, CLOSE_FIX + hint)


def _automatic(info, sizing: Sizing, gpu: GpuFacts) -> Choice | None:
    """What Automatic would start with on ``gpu``, where another precision was asked for."""
    if sizing.precision == "auto":
        return None
    return choose_precision(info, replace(sizing, precision="auto"), gpu)
