"""Engine settings, each declared here once (default, label, choices and their help, range,
flag: ``settings_schema``), and their validation (no vLLM import here: cheap to use from any
layer). The app's ``EngineChoice`` gathers them; the CLI's flags and the dialog's rows derive
from the same declarations."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ..errors import ConfigError
from ..framing import DEFAULT_DELAY_MS, TOKENS_PER_SECOND
from ..setting_refs import ref
from ..settings_schema import check_declared, setting, spec_of
from .delays import LONGEST_TRAINED_MS, TRAINED_DELAYS_MS, TRAINED_IN_WORDS, delay_text, nearest_trained_delay
from .sizing.precision import CHOICES as PRECISION_CHOICES
from .sizing.precision import DEFAULT_PRECISION
from .sizing.precision import flag_help as precision_flag_help
from .sizing.precision import validate as validate_precision

FULL_REFUSED = (
    "Graph mode FULL is not supported by Voxtral Realtime: its prefill/mixed steps (the "
    "first step of every stream) cannot run as a full CUDA graph, and vLLM's model refuses it."
)
DTYPES = ("auto", "bfloat16", "float16", "float32")
# Session length when none is set: 8192 tokens ≈ 10.9 min, or the model's own maximum if that is
# less. Longer costs little memory (the decoder's sliding window caps its KV cache) but vLLM's
# step grows with the session, so sessions roll over long before (rollover.py).
DEFAULT_MAX_MODEL_LEN = 8192
# max_num_batched_tokens: a captioning step has one token per stream (a new stream's first step
# ~40-60), and vLLM keeps every in-flight batch's worth of tokens in each sliding-window layer's
# KV cache (memory.py): vLLM's default 2048 costs the real model 5.2 GiB a stream, 256 1.7 GiB.
DEFAULT_STEP_TOKENS = 256
_GRAPH_MODE_HELP = (  # vLLM's cudagraph_mode: what each does, the default third
    ("NONE", "no CUDA graphs (slowest steps, fastest start)"),
    ("PIECEWISE", "graphs between attention layers"),
    ("FULL_DECODE_ONLY", "each decode step one full graph (default, fastest)"),
    ("FULL_AND_PIECEWISE", "full graphs for decode, piecewise otherwise"),
)
DEFAULT_GRAPH_MODE = _GRAPH_MODE_HELP[2][0]


@dataclass(frozen=True)
class InProcessSettings:
    """Everything that decides how the in-process engine is built.

    ``kv_cache_gib`` None sizes the KV cache for exactly ``max_streams`` sessions of
    ``max_model_len`` tokens (as vLLM lays it out: memory.py) instead of vLLM's default of
    taking 90% of the GPU: a desktop keeps room for the rest of the screen.
    ``max_model_len`` None: ``DEFAULT_MAX_MODEL_LEN`` or the model's maximum if less
    (``for_model``); a set value above the model's maximum is refused.
    The fields declared with ``setting`` are the person's (the CLI's flags, the dialog's rows);
    the others are set by the front end or an expert.
    """

    model_dir: str = setting(
        "", label="&Model folder", words="model", restarts_engine=True, flag="--model",
        metavar="DIR", flag_help="Voxtral Realtime model directory (params.json, tekken.json, "
                                 "weights)")
    # self-check with the tiny model (random weights)
    dummy_weights: bool = setting(
        False, label="Random weights (self-check only: the text is gibberish)",
        words="random weights", restarts_engine=True, flag="--dummy-weights",
        flag_help="random weights instead of the model's (self-check; the text is gibberish)")
    graph_mode: str = setting(
        DEFAULT_GRAPH_MODE, label="&Graph mode", restarts_engine=True, flag="--graph-mode",
        metavar="MODE", choices=tuple((m, f"{m}: {text}") for m, text in _GRAPH_MODE_HELP),
        flag_help=f"CUDA graph mode: {', '.join(m for m, _ in _GRAPH_MODE_HELP)} "
                  f"(default {DEFAULT_GRAPH_MODE})")
    # only the delays the model was trained on (engine/delays.py); a saved other: the nearest
    delay_ms: int = setting(
        DEFAULT_DELAY_MS, label="&Delay", words="transcription delay", restarts_engine=True,
        choices=tuple((d, delay_text(d)) for d in TRAINED_DELAYS_MS),
        nearest=nearest_trained_delay, flag="--delay-ms", metavar="MS",
        flag_help=f"transcription delay in ms, one the model was trained on: {TRAINED_IN_WORDS} "
                  f"(default: the model's, {DEFAULT_DELAY_MS}; more is more accurate, less "
                  "is sooner)",
        flag_fix=f"give one the model was trained on: {TRAINED_IN_WORDS}, e.g. --delay-ms "
                 f"{DEFAULT_DELAY_MS}")
    # None: sized for the streams and the session length
    kv_cache_gib: float | None = setting(
        None, label="GPU memory &budget", words="GPU memory budget", restarts_engine=True,
        low=0.1, high=256.0, automatic="Automatic (sized for 2 streams)", flag="--kv-cache-gib",
        metavar="GIB",
        flag_help="KV-cache memory budget (default: sized for the streams and session length)")
    # tokens per session (12.5 a second); None: DEFAULT_MAX_MODEL_LEN or the model's max
    max_model_len: int | None = setting(
        None, label="Max session &length", words="session length", restarts_engine=True,
        low=128, high=131072,
        automatic=f"Automatic ({DEFAULT_MAX_MODEL_LEN}, or the model's maximum)",
        flag="--max-model-len", metavar="TOKENS",
        flag_help=f"max session length in tokens, {TOKENS_PER_SECOND:g} per second of audio "
                  f"(default {DEFAULT_MAX_MODEL_LEN}, or the model's maximum if less)")
    enforce_eager: bool = setting(
        False, label="Fast start: no compilation, no CUDA graphs (slower steps)",
        words="fast start", restarts_engine=True, flag="--eager",
        flag_help="no torch.compile and no CUDA graphs: faster start, slower steps")
    # auto: the most precise that fits the GPU now (engine/sizing/precision.py)
    precision: str = setting(
        DEFAULT_PRECISION, label="Precision (&quantization)", words="precision",
        restarts_engine=True, choices=PRECISION_CHOICES, flag="--precision", metavar="P",
        flag_help=precision_flag_help())
    max_streams: int = 2
    capture_sizes: tuple[int, ...] | None = None  # None: 1, 2, 4... up to max_streams
    # None: what the footprint needs (+10 %), so vLLM starts beside the desktop (engine/sizing/memory.py)
    gpu_memory_utilization: float | None = None
    dtype: str = "auto"  # an expert's override of the precision's dtype
    cpu_threads: int | None = None
    step_tokens: int = DEFAULT_STEP_TOKENS  # vLLM's max_num_batched_tokens
    extra_engine_args: dict = field(default_factory=dict)

    def validated(self) -> InProcessSettings:
        mode = self.graph_mode.strip().upper()
        if mode == "FULL":
            raise ConfigError(FULL_REFUSED, f"use {DEFAULT_GRAPH_MODE} (default) or "
                              "FULL_AND_PIECEWISE", setting="graph_mode")
        if mode not in GRAPH_MODES:
            raise ConfigError(f"Unknown graph mode {self.graph_mode!r}.",
                              f"choose one of {', '.join(GRAPH_MODES)}", setting="graph_mode")
        validate_delay_ms(self.delay_ms)
        # aliases (bf16, 4bit...) read as the choice they name, then every declared rule
        normal = replace(self, graph_mode=mode, precision=validate_precision(self.precision))
        check_declared(normal)
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
        if not self.max_streams <= self.step_tokens <= 65536:
            raise ConfigError(f"step token budget {self.step_tokens} is out of range.",
                              f"use {max(self.max_streams, 64)} to 65536 (default {DEFAULT_STEP_TOKENS})")
        if self.gpu_memory_utilization is not None and not 0.05 <= self.gpu_memory_utilization <= 0.98:
            raise ConfigError("gpu_memory_utilization must be between 0.05 and 0.98.", "e.g. 0.9")
        return replace(normal, capture_sizes=sizes)

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
                f"use at most {model_max_len} ({ref('max_model_len')}), or leave it unset for the default",
                setting="max_model_len")
        return self


GRAPH_MODES = spec_of(InProcessSettings, "graph_mode").values


def validate_delay_ms(delay_ms: int) -> None:
    """The delay's own words (the values it takes are its ``Spec``'s)."""
    try:
        spec_of(InProcessSettings, "delay_ms").validate(delay_ms)
    except ValueError:
        raise ConfigError(
            f"Transcription delay {delay_ms} ms is not one Voxtral Realtime was trained on: "
            f"{TRAINED_IN_WORDS}.",
            f"use {DEFAULT_DELAY_MS} (default), {DEFAULT_DELAY_MS // 2} for less lag, "
            f"{DEFAULT_DELAY_MS * 2} or {LONGEST_TRAINED_MS} for better accuracy",
            setting="delay_ms") from None


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
