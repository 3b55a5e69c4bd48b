"""The in-process engine's GPU memory: what it needs, and what to tell vLLM.

KV cache. vLLM 0.32 sizes Voxtral Realtime's KV cache from per-layer specs (vllm/v1/
kv_cache_interface.py, vllm/v1/core/kv_cache_utils.py); this module repeats that arithmetic for
the model's two kinds of layers, without importing vLLM:
- the decoder's layers: sliding window (8192 for the real model), ``block_size`` tokens a block;
- the causal audio encoder's layers: "block pooling", ``downsample_factor`` stored states per
  token, and a sliding window in pooled units of ``ceil(window / downsample) + 1``.
A sliding-window layer holds ``min(window - 1 + in_flight_tokens, max_model_len)`` tokens plus
one block, where ``in_flight_tokens`` is every concurrent batch's ``max_num_batched_tokens`` (2
batches with async scheduling, vLLM's default on CUDA). That reservation, not the window, is
most of the encoder's share, so voxcap sets ``max_num_batched_tokens`` itself (settings.py).
Pages are unified to the largest (the smaller page's block size is multiplied), layers are
grouped by kind into groups of equal size (the smaller kind padded), and a pool block holds one
page of every layer of a group. A session needs ``blocks_per_session`` pool blocks; the pool
keeps one block back (the null block). tests/engine/sizing/test_memory.py checks all of this against
vLLM's own functions and against a running engine.

The rest (CUDA context, activations of the profiling run, CUDA graphs, allocator slack) is
measured on the GPU (docs/gpu-results.md) and kept in ``OVERHEAD_BYTES``.

vLLM refuses to start unless ``gpu_memory_utilization`` x total memory is *free* at start-up
(``request_memory`` in vllm/v1/worker/utils.py), even with a fixed KV size, so at its default
0.9 a 16 GB card with 2 GB used by the desktop could not start. voxcap asks for the footprint
it needs, never a blanket 90 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .precision import DEFAULT_PRECISION

GIB = 2**30
# Non-weight, non-KV GPU memory of the engine as NVML sees it (CUDA context, torch's allocator
# pool after vLLM's profiling run, CUDA graphs), measured on an H200 with the real model's shape
# (docs/gpu-results.md): 0.84-0.86 GiB in the graph modes for 1, 2 and 4 streams, 1.64 GiB
# eager (NONE, 4 streams). 1.25 GiB puts every measured engine within 4 % of the estimate.
OVERHEAD_BYTES = int(1.25 * GIB)
# No margin on top: OVERHEAD_BYTES is already 0.4 GiB above what was measured, and every measured
# engine used less than its estimate.
UTILIZATION_MARGIN = 1.0
# The engine process's own CUDA context, part of OVERHEAD_BYTES: vLLM checks what is free only
# after creating it (measured on the H200: 11.50 GiB free before the start, 10.99 GiB seen by
# vLLM), so it is asked for the footprint less this, and voxcap's own gate (free >= footprint)
# is the one that refuses, with the numbers, before vLLM starts.
CUDA_CONTEXT_BYTES = int(0.5 * GIB)
# Start-up peaks above the estimate, per precision: NVML on the H200 (real shape, cold starts:
# torch.compile, the profiling run, graph capture). bfloat16 and FP8 peak well above what they
# then keep: FP8 + FP8 KV, 1 stream, 7.25 GiB at the peak, 6.43 GiB running, estimate 6.58 GiB
# (6.65 from the real weights file); bfloat16, 1 stream, 11.87 GiB against an estimate of
# 11.19. 4-bit weights do not: 4-bit + FP8 KV peaked 5.68 GiB (2 streams, estimate 5.70) and
# 4.80 GiB (1 stream, estimate 4.84), within 0.02 GiB of what they kept (docs/gpu-results.md).
# The gate asks for this much more free than the footprint, so that a card's first
# start does not run out of memory halfway.
START_PEAK_BYTES = int(0.75 * GIB)
START_PEAK_4BIT_BYTES = int(0.05 * GIB)


def start_peak_bytes(precision) -> int:
    """Free memory a start needs beyond the footprint of ``precision`` (precision.Precision)."""
    return START_PEAK_4BIT_BYTES if precision.four_bit else START_PEAK_BYTES

# vLLM's own defaults, per build: the cache block size (CacheConfig.DEFAULT_BLOCK_SIZE on CUDA;
# the CPU attention backend uses 128) and concurrent batches (2 with async scheduling on CUDA).
BLOCK_SIZE = {"cuda": 16, "cpu": 128}
CONCURRENT_BATCHES = {"cuda": 2, "cpu": 1}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class _LayerKind:
    layers: int
    page_bytes: int  # one block of one layer
    block_size: int  # tokens a block
    window: int | None  # sliding window in (pooled) tokens; None: full attention

    def blocks(self, max_model_len: int, in_flight: int) -> int:
        """Blocks one full-length session holds in one layer (vLLM's max_memory_usage_bytes / page)."""
        if self.window is None:
            return _cdiv(max_model_len, self.block_size)
        tokens = min(self.window - 1 + in_flight, max_model_len)
        return _cdiv(tokens, self.block_size) + 1


@dataclass(frozen=True)
class KVPlan:
    """How vLLM lays out the KV cache for one engine configuration."""

    bytes_per_block: int  # one block of the shared pool
    blocks_per_session: int  # pool blocks one session of max_model_len tokens takes
    max_model_len: int
    check_bytes: int  # what vLLM's start-up check says one session needs

    @property
    def session_bytes(self) -> int:
        return self.bytes_per_block * self.blocks_per_session

    def budget_bytes(self, streams: int) -> int:
        """The smallest ``kv_cache_memory_bytes`` that holds ``streams`` full-length sessions."""
        return self.bytes_per_block * (streams * self.blocks_per_session + 1)

    def num_blocks(self, budget_bytes: int) -> int:
        return budget_bytes // self.bytes_per_block

    def sessions(self, budget_bytes: int) -> float:
        """vLLM's "maximum concurrency" for this budget."""
        return self.num_blocks(budget_bytes) / self.blocks_per_session

    def usable_sessions(self, budget_bytes: int) -> float:
        """Sessions that really fit: the pool keeps one block back (the null block)."""
        return (self.num_blocks(budget_bytes) - 1) / self.blocks_per_session

    def tokens(self, budget_bytes: int) -> int:
        """vLLM's "KV cache size: N tokens" for this budget."""
        return int(self.sessions(budget_bytes) * self.max_model_len)


def _layer_kinds(params: dict, dtype_bytes: int, block_size: int) -> list[_LayerKind]:
    def state_bytes(p: dict) -> int:  # one token (state) of one layer: K and V of every KV head
        head_dim = p.get("head_dim") or p["dim"] // p["n_heads"]
        return p.get("n_kv_heads", p["n_heads"]) * 2 * head_dim * dtype_bytes

    whisper = params["multimodal"]["whisper_model_args"]
    enc = whisper["encoder_args"]
    pool = int((whisper.get("downsample_args") or {}).get("downsample_factor", 1))
    dec_window = params.get("sliding_window")
    enc_window = enc.get("sliding_window")
    return [
        _LayerKind(params["n_layers"], state_bytes(params) * block_size, block_size,
                   int(dec_window) if dec_window else None),
        _LayerKind(enc["n_layers"], state_bytes(enc) * block_size * pool, block_size,
                   _cdiv(int(enc_window), pool) + 1 if enc_window else None),
    ]


def kv_plan(params: dict, max_model_len: int, dtype_bytes: int, block_size: int,
            in_flight_tokens: int) -> KVPlan:
    """vLLM 0.32's KV-cache layout for a Voxtral Realtime model (``params``: params.json)."""
    kinds = _layer_kinds(params, dtype_bytes, block_size)
    check = sum(k.layers * k.blocks(max_model_len, in_flight_tokens) * k.page_bytes for k in kinds)
    # unify_kv_cache_spec_page_size: smaller pages get proportionally larger blocks
    page = max(k.page_bytes for k in kinds)
    unified = []
    for k in kinds:
        if page % k.page_bytes:
            raise ValueError("page sizes that do not divide each other are not modelled")
        unified.append(_LayerKind(k.layers, page, k.block_size * (page // k.page_bytes), k.window))
    # _get_kv_cache_groups_uniform_page_size: groups of equal size, the smaller kind padded
    counts = [k.layers for k in unified]
    group_size = min(counts)
    if max(counts) < min(counts) * 1.5:
        group_size = max(counts)
    blocks = sum(_cdiv(k.layers, group_size) * k.blocks(max_model_len, in_flight_tokens)
                 for k in unified)
    per_block = max(min(k.layers, group_size) for k in unified) * page
    return KVPlan(per_block, blocks, max_model_len, check)


def plan_for(info, max_model_len: int, dtype_bytes: int, build: str, step_tokens: int) -> KVPlan:
    """The plan for a model folder (``ModelInfo``) on a build ("cuda" or "cpu")."""
    build = build if build in BLOCK_SIZE else "cuda"
    return kv_plan(info.params, max_model_len, dtype_bytes, BLOCK_SIZE[build],
                   CONCURRENT_BATCHES[build] * step_tokens)


def kv_budget_bytes(plan: KVPlan, max_streams: int, kv_cache_gib: float | None = None) -> int:
    """KV-cache bytes for ``max_streams`` full-length sessions, or the configured budget."""
    if kv_cache_gib is not None:
        return int(kv_cache_gib * GIB)
    return plan.budget_bytes(max_streams)


def param_bytes(p: dict, dtype_bytes: int) -> int:
    """Weights of one transformer stack from its shape (random weights: no file to measure)."""
    dim, layers = p["dim"], p["n_layers"]
    head_dim = p.get("head_dim") or dim // p["n_heads"]
    q = p["n_heads"] * head_dim
    kv = p.get("n_kv_heads", p["n_heads"]) * head_dim
    per_layer = dim * q + 2 * dim * kv + q * dim + 3 * dim * p.get("hidden_dim", 4 * dim)
    return (layers * per_layer + p.get("vocab_size", 0) * dim) * dtype_bytes


def linear_params(params: dict) -> int:
    """Parameters in the linear layers of the decoder and the audio encoder: what online FP8
    (MXFP4) quantization stores in one byte (17/32 of a byte); embeddings, norms and biases keep
    the model's dtype."""
    enc = params["multimodal"]["whisper_model_args"]["encoder_args"]
    return sum(param_bytes(dict(p, vocab_size=0), 1) for p in (params, enc))


def weights_bytes(info, dtype_bytes: int, linear_bytes: float | None = None) -> tuple[int, str]:
    """(bytes, how it was found): the weights file's size, else an estimate from the shape;
    with ``linear_bytes`` (precision.Precision.linear_bytes: 1 for FP8, 17/32 for 4-bit) the
    linear layers take that many bytes a parameter instead of ``dtype_bytes``."""
    f = Path(info.path) / "consolidated.safetensors"
    if f.is_file():
        size, how = f.stat().st_size, "size of consolidated.safetensors"
        file_dtype = 2  # the shipped weights are bfloat16
    else:
        enc = info.params["multimodal"]["whisper_model_args"]["encoder_args"]
        # the encoder has no token embeddings (its params.json names a vocab_size all the same)
        size = param_bytes(info.params, dtype_bytes) + param_bytes(dict(enc, vocab_size=0),
                                                                   dtype_bytes)
        how, file_dtype = "from the model's shape (random weights)", dtype_bytes
    if linear_bytes:
        size -= int(linear_params(info.params) * (file_dtype - linear_bytes))
        how += f", linear layers in {_LINEAR_WORDS.get(linear_bytes, f'{linear_bytes} bytes')}"
    return size, how


_LINEAR_WORDS = {1: "FP8", 17 / 32: "4 bits (MXFP4)"}


def footprint_bytes(weights: int, kv: int) -> int:
    """What the engine process takes of the GPU: weights, KV cache and the measured rest."""
    return weights + kv + OVERHEAD_BYTES


def gpu_memory_utilization_for(need_bytes: int, total_bytes: int) -> float:
    """The ``gpu_memory_utilization`` for an engine whose footprint is ``need_bytes``: vLLM
    checks it against what is free after its process made its CUDA context, so that part of
    the footprint is not asked for again (voxcap's gate, free >= need, refuses first)."""
    fraction = max(need_bytes - CUDA_CONTEXT_BYTES, 0) * UTILIZATION_MARGIN / total_bytes
    return min(0.95, max(0.01, math.ceil(fraction * 10_000) / 10_000))  # up: never below the need


def gib(n: float) -> str:
    return f"{n / GIB:.2f} GiB" if n < 10 * GIB else f"{n / GIB:.1f} GiB"


def check_budget(plan: KVPlan, budget_bytes: int, streams: int) -> None:
    """Refuse, with the numbers, a KV budget that cannot hold ``streams`` full sessions."""
    from ...errors import ConfigError

    if plan.usable_sessions(budget_bytes) >= streams:
        return
    raise ConfigError(
        f"A KV-cache budget of {gib(budget_bytes)} holds "
        f"{plan.usable_sessions(budget_bytes):.2f} sessions of "
        f"{plan.max_model_len} tokens; {streams} stream(s) need {gib(plan.budget_bytes(streams))} "
        f"({gib(plan.session_bytes)} each, as vLLM lays it out).",
        f"raise the GPU memory budget to at least {plan.budget_bytes(streams) / GIB:.2f} GiB, or leave "
        "it unset (automatic), or lower the max session length")


# The real model's shape (mistralai/Voxtral-Mini-4B-Realtime-2602 params.json, the fields sizing
# needs): estimates before a model folder is chosen.
REAL_MODEL_PARAMS: dict[str, Any] = {  # parsed JSON, as ModelInfo.params
    "dim": 3072, "n_layers": 26, "head_dim": 128, "hidden_dim": 9216, "n_heads": 32,
    "n_kv_heads": 8, "vocab_size": 131072, "sliding_window": 8192, "model_max_length": 131072,
    "multimodal": {"whisper_model_args": {
        "encoder_args": {"dim": 1280, "n_layers": 32, "head_dim": 64, "hidden_dim": 5120,
                         "n_heads": 32, "n_kv_heads": 32, "sliding_window": 750},
        "downsample_args": {"downsample_factor": 4}}},
}
REAL_WEIGHTS_BYTES = 8_860_000_000  # consolidated.safetensors, bfloat16


@dataclass(frozen=True)
class Footprint:
    """What the local engine takes of the GPU with given settings, and how each part was found."""

    weights_bytes: int
    weights_from: str
    kv_cache_bytes: int
    kv_cache_from: str
    plan: KVPlan
    overhead_bytes: int = OVERHEAD_BYTES

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes + self.overhead_bytes

    def as_dict(self) -> dict:
        return {"weights_bytes": self.weights_bytes, "weights_from": self.weights_from,
                "kv_cache_bytes": self.kv_cache_bytes, "kv_cache_from": self.kv_cache_from,
                "kv_session_bytes": self.plan.session_bytes,
                "overhead_bytes": self.overhead_bytes, "total_bytes": self.total_bytes}


def footprint(info, streams: int, max_model_len: int | None, kv_cache_gib: float | None = None,
              step_tokens: int | None = None, build: str = "cuda", precision=None,
              dtype_bytes: int = 2) -> Footprint:
    """The engine's GPU footprint for a model folder (``ModelInfo``; None: the real model).
    ``precision``: a ``precision.Precision`` (None: the model's dtype, ``dtype_bytes``)."""
    from ..settings import DEFAULT_MAX_MODEL_LEN, DEFAULT_STEP_TOKENS

    params = info.params if info is not None else REAL_MODEL_PARAMS
    model_max = params.get("model_max_length")
    length = max_model_len or min(DEFAULT_MAX_MODEL_LEN, model_max or DEFAULT_MAX_MODEL_LEN)
    linear = precision.linear_bytes if precision is not None else None
    kv_bytes = (precision.kv_bytes if precision is not None else None) or dtype_bytes
    build = build if build in BLOCK_SIZE else "cuda"
    plan = kv_plan(params, length, kv_bytes, BLOCK_SIZE[build],
                   CONCURRENT_BATCHES[build] * (step_tokens or DEFAULT_STEP_TOKENS))
    if kv_cache_gib is not None:
        kv, kv_how = int(kv_cache_gib * GIB), "the configured KV-cache budget"
    else:
        kv = plan.budget_bytes(streams)
        kv_how = (f"{streams} session(s) of {length} tokens, {gib(plan.session_bytes)} each as "
                  "vLLM lays it out" + (" (FP8)" if kv_bytes == 1 else ""))
    if info is not None:
        weights, w_how = weights_bytes(info, dtype_bytes, linear)
    else:
        weights = REAL_WEIGHTS_BYTES - (int(linear_params(params) * (2 - linear)) if linear else 0)
        w_how = "Voxtral-Mini-4B-Realtime in " + (
            f"{_LINEAR_WORDS[linear]} (linear layers)" if linear else "bfloat16")
    return Footprint(weights, w_how, kv, kv_how, plan)


@dataclass(frozen=True)
class Sizing:
    """The settings that decide how much GPU memory the engine takes (None: the default)."""

    precision: str = DEFAULT_PRECISION
    streams: int = 2
    max_model_len: int | None = None
    kv_cache_gib: float | None = None
    step_tokens: int | None = None
    build: str = "cuda"

    @classmethod
    def of(cls, settings, build: str = "cuda", streams: int | None = None) -> Sizing:
        """From InProcessSettings (or anything with its field names, e.g. the app's settings)."""
        def get(name: str):
            return getattr(settings, name, None)

        return cls(get("precision") or DEFAULT_PRECISION, streams or get("max_streams") or 2,
                   get("max_model_len"), get("kv_cache_gib"), get("step_tokens"), build)


def choose_precision(info, sizing: Sizing, gpu):
    """The precision (precision.Choice) an engine with ``sizing`` starts with on ``gpu``
    (precision.GpuFacts): every choice sized with ``footprint``. ``info``: the model folder
    (ModelInfo), None for the real model's shape."""
    from . import precision as prec

    build = sizing.build

    def need(p, n: int) -> int:
        dtype_bytes = 4 if prec.model_dtype(build, gpu.compute_capability, p) == "float32" else 2
        return footprint(info, n, sizing.max_model_len, sizing.kv_cache_gib, sizing.step_tokens,
                         build, p, dtype_bytes).total_bytes

    return prec.choose(sizing.precision, need, sizing.streams, gpu, build, start_peak_bytes)


def choices_that_fit(info, sizing: Sizing, gpu) -> list:
    """Every precision that would start on ``gpu`` now (precision.Choice, most precise first),
    each with the most streams up to ``sizing.streams`` that it fits: what each would cost here,
    for a person choosing one."""
    from dataclasses import replace

    from ...errors import ConfigError
    from . import precision as prec

    fitting = []
    for name in prec.ORDER:
        for n in range(sizing.streams, 0, -1):
            try:
                c = choose_precision(info, replace(sizing, precision=name, streams=n), gpu)
            except ConfigError:  # this GPU or build cannot run it
                break
            if c.fits and c.need_bytes is not None:
                fitting.append(c)
                break
    return fitting
