"""Engine settings and their validation (no vLLM import here: cheap to use from any layer)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ..errors import ConfigError
from ..framing import STEP_MS as TOKEN_MS  # the delay is a whole number of steps

GRAPH_MODES = ("NONE", "PIECEWISE", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
DEFAULT_GRAPH_MODE = "FULL_DECODE_ONLY"
FULL_REFUSED = (
    "Graph mode FULL is not supported by Voxtral Realtime: its prefill/mixed steps (the "
    "first step of every stream) cannot run as a full CUDA graph, and vLLM's model refuses it."
)
DTYPES = ("auto", "bfloat16", "float16", "float32")
MIN_DELAY_MS, MAX_DELAY_MS = TOKEN_MS, 2400
# Session length when none is set: 8192 tokens ≈ 10.9 min, or the model's own maximum if that is
# less. Longer costs little memory (the decoder's sliding window caps its KV cache) but vLLM's
# step grows with the session, so sessions roll over long before (rollover.py).
DEFAULT_MAX_MODEL_LEN = 8192
# max_num_batched_tokens: a captioning step has one token per stream (a new stream's first step
# ~40-60), and vLLM keeps every in-flight batch's worth of tokens in each sliding-window layer's
# KV cache (memory.py): vLLM's default 2048 costs the real model 5.2 GiB a stream, 256 1.7 GiB.
DEFAULT_STEP_TOKENS = 256


@dataclass(frozen=True)
class InProcessSettings:
    """Everything that decides how the in-process engine is built.

    ``kv_cache_gib`` None sizes the KV cache for exactly ``max_streams`` sessions of
    ``max_model_len`` tokens (as vLLM lays it out: memory.py) instead of vLLM's default of
    taking 90% of the GPU: a desktop keeps room for the rest of the screen.
    ``max_model_len`` None: ``DEFAULT_MAX_MODEL_LEN`` or the model's maximum if less
    (``for_model``); a set value above the model's maximum is refused.
    """

    model_dir: str
    dummy_weights: bool = False
    graph_mode: str = DEFAULT_GRAPH_MODE
    transcription_delay_ms: int | None = None  # None: the model's own (480 ms)
    max_model_len: int | None = None  # tokens per session; 12.5 tokens per second of audio
    max_streams: int = 2
    capture_sizes: tuple[int, ...] | None = None  # None: 1, 2, 4... up to max_streams
    kv_cache_gib: float | None = None
    # None: what the footprint needs (+10 %), so vLLM starts beside the desktop (engine/sizing/memory.py)
    gpu_memory_utilization: float | None = None
    dtype: str = "auto"  # an expert's override of the precision's dtype
    # auto: the most precise that fits the GPU now (engine/sizing/precision.py); bfloat16, fp8,
    # fp8_kv, mxfp4 (4-bit weights), mxfp4_kv
    precision: str = "auto"
    enforce_eager: bool = False  # no torch.compile, no graphs: fast start, slow steps
    cpu_threads: int | None = None
    step_tokens: int = DEFAULT_STEP_TOKENS  # vLLM's max_num_batched_tokens
    extra_engine_args: dict = field(default_factory=dict)

    def validated(self) -> InProcessSettings:
        mode = self.graph_mode.strip().upper()
        if mode == "FULL":
            raise ConfigError(FULL_REFUSED, "use FULL_DECODE_ONLY (default) or FULL_AND_PIECEWISE")
        if mode not in GRAPH_MODES:
            raise ConfigError(f"Unknown graph mode {self.graph_mode!r}.",
                              f"choose one of {', '.join(GRAPH_MODES)}")
        validate_delay_ms(self.transcription_delay_ms)
        if self.max_model_len is not None and self.max_model_len < 128:
            raise ConfigError(f"max session length {self.max_model_len} tokens is too short.",
                              "use at least 128 tokens (10 s of audio); 8192 ≈ 10.9 min")
        if self.max_streams < 1:
            raise ConfigError(f"max streams {self.max_streams} is out of range.", "use 1 or more")
        if self.max_streams > self.step_tokens:  # how many fit the GPU: the start gate says
            raise ConfigError(f"max streams {self.max_streams} is more than the step token budget "
                              f"({self.step_tokens} tokens; every stream needs one in each step).",
                              f"use at most {self.step_tokens} streams")
        if self.capture_sizes is not None:
            sizes = tuple(sorted(set(int(s) for s in self.capture_sizes)))
            if not sizes or sizes[0] < 1:
                raise ConfigError(f"capture sizes {self.capture_sizes} are invalid.",
                                  "give positive batch sizes, e.g. 1,2,4")
        else:
            sizes = default_capture_sizes(self.max_streams)
        if self.dtype not in DTYPES:
            raise ConfigError(f"Unknown dtype {self.dtype!r}.", f"choose one of {', '.join(DTYPES)}")
        from .sizing.precision import validate as validate_precision

        precision = validate_precision(self.precision)
        if not self.max_streams <= self.step_tokens <= 65536:
            raise ConfigError(f"step token budget {self.step_tokens} is out of range.",
                              f"use {max(self.max_streams, 64)} to 65536 (default {DEFAULT_STEP_TOKENS})")
        if self.kv_cache_gib is not None and self.kv_cache_gib <= 0:
            raise ConfigError("The KV-cache budget must be positive.", "e.g. --kv-cache-gib 2")
        if self.gpu_memory_utilization is not None and not 0.05 <= self.gpu_memory_utilization <= 0.98:
            raise ConfigError("gpu_memory_utilization must be between 0.05 and 0.98.", "e.g. 0.9")
        return replace(self, graph_mode=mode, capture_sizes=sizes, precision=precision)

    def for_model(self, model_max_len: int | None) -> InProcessSettings:
        """These settings with the session length resolved for a model whose maximum is
        ``model_max_len`` (params.json's model_max_length; None: unknown)."""
        if self.max_model_len is None:
            length = DEFAULT_MAX_MODEL_LEN
            if model_max_len:
                length = min(length, model_max_len)
            return replace(self, max_model_len=length)
        if model_max_len and self.max_model_len > model_max_len:
            raise ConfigError(
                f"max session length {self.max_model_len} tokens is more than this model allows "
                f"({model_max_len} tokens, model_max_length in params.json).",
                f"use at most {model_max_len} (--max-model-len), or leave it unset for the default")
        return self


def validate_delay_ms(delay_ms: int | None) -> None:
    if delay_ms is None:
        return
    if not (MIN_DELAY_MS <= delay_ms <= MAX_DELAY_MS) or delay_ms % TOKEN_MS:
        raise ConfigError(
            f"Transcription delay {delay_ms} ms is invalid: it must be a multiple of {TOKEN_MS} ms "
            f"between {MIN_DELAY_MS} and {MAX_DELAY_MS}.",
            "use e.g. 480 (default), 240 for less lag, 960 for better accuracy",
        )


def default_capture_sizes(max_streams: int) -> tuple[int, ...]:
    sizes, s = [], 1
    while s < max_streams:
        sizes.append(s)
        s *= 2
    sizes.append(max_streams)
    return tuple(sorted(set(sizes)))


# What only a CUDA GPU has: CUDA graphs (vLLM runs NONE on its CPU build whatever is asked) and
# the GPU memory share (the CPU build only checks it against host memory). The KV-cache budget
# is not here: the CPU build sizes its cache in host memory from it too.
CUDA_ONLY = frozenset({"graph_mode", "capture_sizes", "gpu_memory_utilization"})


def applies(name: str, cuda: bool) -> bool:
    """Whether the in-process engine's setting ``name`` can change anything on a machine with
    (``cuda``) or without a CUDA GPU: the GUI shows the others as not applicable."""
    return cuda or name not in CUDA_ONLY


def changes_that_apply(old, new, cuda: bool) -> list[str]:
    """The settings that differ between ``old`` and ``new`` and can change the engine here: an
    engine restart for the others (a graph mode without CUDA) cannot change anything. Settings
    of another kind (an in-process engine for a remote one) differ in everything."""
    if type(old) is not type(new):
        return ["engine"]
    return [f.name for f in fields(new)
            if getattr(old, f.name) != getattr(new, f.name) and applies(f.name, cuda)]
