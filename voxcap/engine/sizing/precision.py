"""Precision as a setting: what each choice tells vLLM, and the automatic choice for a GPU.

    choice = choose("auto", footprint_for, streams=2, gpu=GpuFacts(total, free, (8, 6)))
    choice.precision.name, choice.streams, choice.line    # "fp8", 2, "FP8 weights: fits ..."

Every choice goes through vLLM's public engine options only: ``dtype``, online quantization
(``quantization="fp8_per_tensor"``: vLLM quantizes each linear layer as it loads, W8A8 on
compute capability 8.9+, weight-only through its FP8 Marlin kernels on 7.5-8.6;
``quantization="mxfp4"``: 4-bit weights with a shared 8-bit scale per 32, quantized as they load
and run by Marlin's weight-only FP4 kernel, in bfloat16 only) and ``kv_cache_dtype="fp8"``. Measured
on the H200 with the real model's shape, engine for 2 streams (docs/gpu-results.md): bfloat16
13,103 MiB, FP8 weights 9,235 MiB, FP8 weights + FP8 KV cache 7,467 MiB, step time the same or
lower, every decode step still one full CUDA graph.

Automatic picks the most precise choice whose footprint fits what is free on the GPU now
(the desktop's use counted) for the streams asked; only if none fits does it offer fewer
streams. It never picks FP8 where bfloat16 fits, nor 4-bit weights where FP8 fits. Cards
without bfloat16 (before compute capability 8.0: RTX 20 / Turing) run float16 instead. No vLLM
import here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...errors import ConfigError

PRECISIONS = ("auto", "bfloat16", "fp8", "fp8_kv", "mxfp4", "mxfp4_kv")
DEFAULT_PRECISION = "auto"
BF16_COMPUTE = (8, 0)  # bfloat16 needs Ampere or newer
FP8_COMPUTE = (7, 5)  # vLLM's FP8 Marlin kernels (weight-only) need Turing or newer
FP8_W8A8_COMPUTE = (8, 9)  # FP8 matrix units: RTX 40/50, Hopper
# An FP8 KV cache needs an attention kernel that reads it; vLLM 0.32 has one from 8.0 on only:
# FlashInfer (a dependency of vLLM's CUDA wheel) on 8.x, Triton on 8.9+, FlashAttention 3 on
# Hopper. On 7.5 FlashAttention needs 8.0, FlashInfer is kept off sm75, Triton's FP8 KV wants 8.9.
FP8_KV_COMPUTE = (8, 0)
ONLINE_FP8 = "fp8_per_tensor"  # vLLM 0.32's online FP8 ("fp8" is its deprecated alias)
# vLLM 0.32's online MXFP4 (config/quantization.py: _ONLINE_SHORTHANDS; a checkpoint without
# quantization metadata gets the online method). Its CUDA kernels: FlashInfer, Marlin (7.5+:
# marlin_utils_fp4.is_fp4_marlin_supported), Humming, B12x, emulation; none on the CPU build.
# Marlin's FP4 kernel does not run in float16, the only dtype before 8.0: forced on the H200
# (float16, TRITON_ATTN, as an RTX 20 runs) the engine failed at start, "marlin_mm ... Invalid
# thread config ... MKN = [1024, 1280, 6144] and num_bits = 4" (docs/gpu-results.md).
ONLINE_MXFP4 = "mxfp4"
MXFP4_COMPUTE = BF16_COMPUTE
MXFP4_LINEAR_BYTES = 17 / 32  # 4 bits a weight + one 8-bit (E8M0) scale per 32 weights


@dataclass(frozen=True)
class Precision:
    name: str  # one of PRECISIONS but "auto"
    label: str  # what a person reads
    quantization: str | None  # vLLM's ``quantization``
    kv_cache_dtype: str  # vLLM's ``kv_cache_dtype``
    accuracy: str  # what it costs, as far as it is known
    linear_bytes: float | None = None  # bytes a linear-layer weight takes (None: the model's dtype)
    brief: str = ""  # what it saves, for --precision's help

    @property
    def fp8_weights(self) -> bool:
        return self.quantization == ONLINE_FP8

    @property
    def four_bit(self) -> bool:
        return self.quantization == ONLINE_MXFP4

    @property
    def kv_bytes(self) -> int | None:
        """Bytes a KV element takes, or None: the model's dtype."""
        return 1 if self.kv_cache_dtype.startswith("fp8") else None


_NOT_MEASURED = ("not yet measured on Voxtral with its real weights: benchmarks/precision_wer.py "
                 "measures it")
FOUR_BIT_CAVEAT = "accuracy may be lower (not yet measured)"  # said wherever 4-bit is picked
BY_NAME = {p.name: p for p in (
    Precision("bfloat16", "bfloat16 (the model's own precision)", None, "auto",
              "the model as trained: the reference for accuracy"),
    Precision("fp8", "FP8 weights", ONLINE_FP8, "auto",
              "weights rounded to 8 bits, about 4 GiB less memory; usually a small loss of "
              f"accuracy ({_NOT_MEASURED})", 1, "FP8 weights: ~4 GiB less, for 12 GB cards"),
    Precision("fp8_kv", "FP8 weights + FP8 KV cache", ONLINE_FP8, "fp8",
              "also the attention cache in 8 bits, another 0.9 GiB a stream less; a little more "
              f"loss than FP8 weights alone ({_NOT_MEASURED})", 1, "FP8 weights and KV cache"),
    Precision("mxfp4", "4-bit weights", ONLINE_MXFP4, "auto",
              "weights rounded to 4 bits (MXFP4), about 1.7 GiB less than FP8, for 6-8 GB cards "
              f"(RTX 30 or later); accuracy may be lower than FP8's ({_NOT_MEASURED})",
              MXFP4_LINEAR_BYTES, "4-bit weights: ~1.7 GiB less than FP8, for 6-8 GB RTX 30 or "
                                  "later; accuracy may be lower"),
    Precision("mxfp4_kv", "4-bit weights + FP8 KV cache", ONLINE_MXFP4, "fp8",
              "4-bit weights and the attention cache in 8 bits: the smallest choice; accuracy may "
              f"be lower than FP8's ({_NOT_MEASURED})", MXFP4_LINEAR_BYTES,
              "4-bit weights and FP8 KV cache"),
)}
# most precise first: the automatic choice tries them so
ORDER = ("bfloat16", "fp8", "fp8_kv", "mxfp4", "mxfp4_kv")
LABELS = {DEFAULT_PRECISION: "Automatic (the most precise that fits this GPU)",
          **{n: p.label for n, p in BY_NAME.items()}}
CHOICES = tuple((n, LABELS[n]) for n in PRECISIONS)  # the setting's (engine/settings.py)
# what the automatic choice does, as Settings explains it
AUTOMATIC = ("Automatic: bfloat16 where it fits, FP8 weights (12 GB cards) or FP8 weights + FP8 KV "
             "cache where it does not, 4-bit weights (6-8 GB cards, RTX 30+) only where FP8 does "
             f"not fit the streams; 4-bit {FOUR_BIT_CAVEAT}.")


def flag_help() -> str:
    """--precision's help: each choice and what it saves."""
    rest = ", ".join(f"{n} ({p.brief})" if p.brief else n for n, p in BY_NAME.items())
    return (f"{DEFAULT_PRECISION} (default: the most precise that fits the GPU's free memory), "
            f"{rest}")


def explained(name: str) -> str:
    """What choosing ``name`` means, in Settings' words."""
    return AUTOMATIC if name == DEFAULT_PRECISION else f"{BY_NAME[name].label}: {BY_NAME[name].accuracy}."


def validate(name: str) -> str:
    key = (name or DEFAULT_PRECISION).strip().lower().replace("-", "_").replace("+", "_")
    key = key.replace("4bit", "4_bit")
    key = {"bf16": "bfloat16", "fp8_weights": "fp8", "fp8_fp8": "fp8_kv", "4_bit": "mxfp4",
           "4_bit_kv": "mxfp4_kv", "4_bit_fp8": "mxfp4_kv", "mxfp4_fp8": "mxfp4_kv"}.get(key, key)
    if key not in PRECISIONS:
        raise ConfigError(f"Unknown precision {name!r}.",
                          f"choose one of {', '.join(PRECISIONS)} (default {DEFAULT_PRECISION})",
                          setting="precision")
    return key


@dataclass(frozen=True)
class GpuFacts:
    """What NVML says of the GPU vLLM will use (None: not known, e.g. the CPU build)."""

    total_bytes: int | None = None
    free_bytes: int | None = None
    compute_capability: tuple[int, int] | None = None

    @property
    def size_text(self) -> str:
        """The card's size as people name it ("12 GB": NVIDIA's GB are GiB, 12,288 MiB)."""
        if not self.total_bytes:
            return "this GPU"
        return f"this {max(1, round(self.total_bytes / 2**30))} GB card"


def model_dtype(build: str, compute_capability: tuple[int, int] | None,
                precision: Precision | None = None) -> str:
    """The dtype the model runs in: float16 before Ampere; on the CPU build float32, but
    bfloat16 with quantized weights (vLLM's online methods take bfloat16 or float16 only)."""
    if build == "cpu":
        return "bfloat16" if precision is not None and precision.quantization else "float32"
    if compute_capability is not None and tuple(compute_capability) < BF16_COMPUTE:
        return "float16"
    return "bfloat16"


def supported(p: Precision, build: str, compute_capability: tuple[int, int] | None) -> str | None:
    """Why ``p`` cannot run here, or None."""
    cc = tuple(compute_capability) if compute_capability else None
    if p.fp8_weights and build == "cpu":  # seen: _C::static_scaled_fp8_quant is a stub there
        return "vLLM's CPU build has no working FP8 kernels"
    if p.fp8_weights and build == "cuda" and cc is not None and cc < FP8_COMPUTE:
        return (f"FP8 needs compute capability {FP8_COMPUTE[0]}.{FP8_COMPUTE[1]} or newer "
                f"(this GPU: {cc[0]}.{cc[1]})")
    if p.four_bit and build == "cpu":  # vLLM 0.32 lists no MXFP4 linear kernel for the CPU
        return "vLLM's CPU build has no 4-bit (MXFP4) kernels"
    if p.four_bit and build == "cuda" and cc is not None and cc < MXFP4_COMPUTE:
        return (f"4-bit weights need bfloat16, compute capability {MXFP4_COMPUTE[0]}."
                f"{MXFP4_COMPUTE[1]} or newer, an RTX 30 or later (this GPU: {cc[0]}.{cc[1]}; "
                "vLLM 0.32's 4-bit kernel does not run in float16)")
    if p.kv_bytes == 1 and build == "cuda" and cc is not None and cc < FP8_KV_COMPUTE:
        return (f"an FP8 KV cache needs compute capability {FP8_KV_COMPUTE[0]}."
                f"{FP8_KV_COMPUTE[1]} or newer, an RTX 30 or later (this GPU: {cc[0]}.{cc[1]}; "
                "vLLM 0.32 has no attention kernel for it before that)")
    return None


@dataclass(frozen=True)
class Choice:
    """The precision an engine starts with, for how many streams, and the one line saying why."""

    precision: Precision
    requested: str
    streams: int
    streams_asked: int
    dtype: str
    need_bytes: int | None  # the footprint (None: not sized, the CPU build)
    fits: bool  # False: even this does not fit what is free now (the start is refused)
    line: str
    start_margin_bytes: int = 0  # free memory needed beyond the footprint while it starts

    @property
    def free_needed_bytes(self) -> int | None:
        return None if self.need_bytes is None else self.need_bytes + self.start_margin_bytes

    @property
    def label(self) -> str:
        p = self.precision
        if p.name == "bfloat16" and self.dtype == "float32":
            return "float32 (CPU build)"
        if p.name == "bfloat16" and self.dtype != "bfloat16":
            return f"{self.dtype} (no bfloat16 on this GPU)"
        return p.label

    def engine_args(self) -> dict:
        """vLLM's engine arguments for this choice."""
        args: dict = {"dtype": self.dtype}
        if self.precision.quantization:
            args["quantization"] = self.precision.quantization
        if self.precision.kv_cache_dtype != "auto":
            args["kv_cache_dtype"] = self.precision.kv_cache_dtype
        return args


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def choose(requested: str, footprint_for: Callable[[Precision, int], int], streams: int,
           gpu: GpuFacts, build: str = "cuda",
           start_margin: int | Callable[[Precision], int] = 0) -> Choice:
    """The precision (and streams) to start with. ``footprint_for(precision, streams)``: bytes
    the engine takes of the GPU (memory.py); a choice fits when that plus ``start_margin`` (the
    start-up peak above it: bytes, or a function of the precision) is free. Nothing is measured
    here: pure, tested per case."""
    margin = start_margin if callable(start_margin) else (lambda p: start_margin)
    requested = validate(requested)
    cc = gpu.compute_capability
    total, free_now = gpu.total_bytes, gpu.free_bytes
    names = ORDER if requested == "auto" else (requested,)
    candidates = [BY_NAME[n] for n in names if supported(BY_NAME[n], build, cc) is None]
    if not candidates:  # the one asked for cannot run here: say so when it starts
        p = BY_NAME[requested]
        where = "with this vLLM build" if build == "cpu" else "on this GPU"
        raise ConfigError(f"{p.label} cannot run {where}: {supported(p, build, cc)}.",
                          "choose bfloat16 or Automatic as the precision", setting="precision")
    if build != "cuda" or total is None or free_now is None:
        p = candidates[0]
        dtype = model_dtype(build, cc, p)
        why = "CPU build" if build == "cpu" else "GPU memory not known"
        return Choice(p, requested, streams, streams, dtype, None, True,
                      f"{p.label if p.name != 'bfloat16' else dtype} ({why})")
    free = min(free_now, int(total * 0.95))
    counts = range(streams, 0, -1) if requested == "auto" else (streams,)
    for n in counts:  # the streams asked first, with every precision; fewer only if none fits
        for p in candidates:
            need = footprint_for(p, n)
            if need + margin(p) <= free:
                c = Choice(p, requested, n, streams, model_dtype(build, cc, p), need, True, "",
                           margin(p))
                return _with_line(c, gpu.size_text, need, free_now)
    p = candidates[-1]
    need = footprint_for(p, 1 if requested == "auto" else streams)
    c = Choice(p, requested, 1 if requested == "auto" else streams, streams,
               model_dtype(build, cc, p), need, False, "", margin(p))
    return _with_line(c, gpu.size_text, need, free_now)


def _with_line(c: Choice, card: str, need: int, free: int) -> Choice:
    """``c`` with its line: ``need`` bytes (c's footprint) of the ``free`` bytes of the ``card``."""
    from dataclasses import replace

    label = c.label
    if not c.fits:
        return replace(c, line=f"{label} for {c.streams} stream(s) needs ≈"
                               f"{_gib(need + c.start_margin_bytes)} free to start; {card} has "
                               f"{_gib(free)} free")
    fewer = (f", {c.streams} stream{'s' if c.streams > 1 else ''} of {c.streams_asked} "
             "(one source at a time)") if c.streams < c.streams_asked else ""
    how = "fits" if c.requested == "auto" else "chosen; fits"
    caveat = f"; {FOUR_BIT_CAVEAT}" if c.precision.four_bit else ""
    return replace(c, line=f"{label}: {how} {card} (≈{_gib(need)} of "
                           f"{_gib(free)} free){fewer}{caveat}")
