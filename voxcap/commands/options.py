"""Command-line options shared by every command that starts an engine."""

from __future__ import annotations

import argparse
import json
import logging

from .. import logs
from ..engine.remote.settings import (
    DEFAULT_MAX_BUFFER_S,
    RemoteSettings,
    api_key_from_env,
    default_api_key_path,
    find_api_key,
    load_api_key,
)
from ..engine.settings import DEFAULT_GRAPH_MODE, GRAPH_MODES, InProcessSettings
from ..engine.sizing.precision import DEFAULT_PRECISION
from ..errors import ConfigError

log = logging.getLogger(__name__)
ENGINES = ("local", "remote")
_KEEP = object()


def add_engine_options(p: argparse.ArgumentParser, model_required: bool = True,
                       remote: bool = True) -> None:
    """Engine options. ``model_required``: the local engine needs --model (checked when the
    settings are built, since --engine remote does not). ``remote``: also --engine and the
    remote engine's options (not for ``voxcap serve``, which runs the engine itself)."""
    p.set_defaults(model_required=model_required)
    g = p.add_argument_group("engine")
    if remote:
        g.add_argument("--engine", choices=ENGINES, default="local",
                       help="local: vLLM in this process (needs a GPU for real time); remote: a "
                            "vLLM server's realtime endpoint (--server)")
    g.add_argument("--model", metavar="DIR",
                   help="Voxtral Realtime model directory (params.json, tekken.json, weights); "
                        "with --engine remote: the name the server serves, like --server-model")
    g.add_argument("--dummy-weights", action="store_true",
                   help="random weights instead of the model's (self-check; text is gibberish)")
    g.add_argument("--graph-mode", default=DEFAULT_GRAPH_MODE, metavar="MODE",
                   help=f"CUDA graph mode: {', '.join(GRAPH_MODES)} (default {DEFAULT_GRAPH_MODE})")
    g.add_argument("--delay-ms", type=int, default=None, metavar="N",
                   help="transcription delay, 80-2400 in steps of 80 (default: the model's, 480)")
    g.add_argument("--max-model-len", type=int, default=None, metavar="TOKENS",
                   help="max session length in tokens, 12.5 per second of audio (default 8192, or "
                        "the model's maximum if less)")
    g.add_argument("--kv-cache-gib", type=float, default=None, metavar="GIB",
                   help="KV-cache memory budget (default: sized for the streams and session length)")
    g.add_argument("--precision", default=DEFAULT_PRECISION, metavar="P",
                   help="auto (default: the most precise that fits the GPU's free memory), "
                        "bfloat16, fp8 (FP8 weights: ~4 GiB less, for 12 GB cards), fp8_kv "
                        "(FP8 weights and KV cache), mxfp4 (4-bit weights: ~1.7 GiB less than "
                        "FP8, for 6-8 GB RTX 30 or later; accuracy may be lower), mxfp4_kv "
                        "(4-bit weights and FP8 KV cache)")
    g.add_argument("--dtype", default="auto",
                   help="expert override of the precision's dtype: auto (bfloat16 on the GPU, "
                        "float16 before RTX 30, float32 on the CPU build), bfloat16, float16, float32")
    g.add_argument("--eager", action="store_true",
                   help="no torch.compile and no graphs: faster start, slower steps")
    g.add_argument("--engine-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="expert: one more vLLM engine argument (VALUE as JSON, else text), e.g. "
                        "attention_config='{\"flash_attn_version\": 2}'; wins over voxcap's own")
    if not remote:
        return
    r = p.add_argument_group("remote engine (--engine remote)")
    r.add_argument("--server", metavar="URL",
                   help="the vLLM server, e.g. ws://gpu-box:8000 or wss://... (its /v1/realtime)")
    r.add_argument("--server-model", metavar="NAME",
                   help="the model name the server serves (default: its only model)")
    r.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding the server's API key (sent as a bearer "
                        "token; never logged)")
    r.add_argument("--api-key-file", metavar="PATH",
                   help="file holding the API key, readable by its owner only (default: "
                        f"{default_api_key_path()} if it exists; for a server on this "
                        "computer, the key `voxcap serve` made here)")


def engine_settings(args, max_streams: int = 1, graph_mode: str | None = None,
                    max_buffer_s=_KEEP) -> InProcessSettings | RemoteSettings:
    """Validated settings from parsed options (raises ConfigError with the fix):
    ``RemoteSettings`` with --engine remote (``max_buffer_s``: audio held per stream for the
    server, None = unbounded, e.g. for files), else ``InProcessSettings``."""
    if getattr(args, "engine", "local") == "remote":
        return remote_settings(args, max_streams, max_buffer_s)
    if not args.model and getattr(args, "model_required", True):
        raise ConfigError("No model: the local engine needs --model DIR.",
                          "give the model directory, or use --engine remote --server URL")
    return InProcessSettings(
        model_dir=args.model, dummy_weights=args.dummy_weights,
        graph_mode=graph_mode or args.graph_mode, transcription_delay_ms=args.delay_ms,
        max_model_len=args.max_model_len, max_streams=max_streams, kv_cache_gib=args.kv_cache_gib,
        dtype=args.dtype, precision=getattr(args, "precision", DEFAULT_PRECISION),
        enforce_eager=args.eager, extra_engine_args=parse_engine_args(getattr(args, "engine_arg", [])),
    ).validated()


def parse_engine_args(items: list[str]) -> dict:
    """``KEY=VALUE`` items as vLLM engine arguments (VALUE read as JSON where it is JSON)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ConfigError(f"--engine-arg {item!r} is not KEY=VALUE.",
                              "e.g. --engine-arg attention_config='{\"flash_attn_version\": 2}'")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:  # not JSON: the text itself (e.g. quantization=fp8)
            log.debug("--engine-arg %s: not JSON, passed as text", key.strip())
            out[key.strip()] = value
    return out


def remote_settings(args, max_streams: int = 1, max_buffer_s=_KEEP) -> RemoteSettings:
    if not args.server:
        raise ConfigError("--engine remote needs the server's address.",
                          "add --server ws://HOST:PORT (the vLLM server's realtime endpoint)")
    if args.server_model and args.model and args.server_model != args.model:
        raise ConfigError("--model and --server-model name different models.",
                          "give only --server-model NAME with --engine remote")
    return RemoteSettings(
        server_url=args.server, model=args.server_model or args.model or "",
        api_key=_api_key(args), max_streams=max_streams,
        transcription_delay_ms=args.delay_ms or 480,
        max_buffer_s=DEFAULT_MAX_BUFFER_S if max_buffer_s is _KEEP else max_buffer_s,
    ).validated()


def _api_key(args) -> str | None:
    """The key from --api-key-env VAR, --api-key-file PATH, or where the app finds it (the
    default key file; for a server on this computer, the key `voxcap serve` made here); never
    from the command line itself (it would show in the process list and shell history)."""
    if args.api_key_env:
        return api_key_from_env(args.api_key_env)
    if args.api_key_file:
        return load_api_key(args.api_key_file)
    return find_api_key(args.server)[0]


def make_engine(args, on_event=None, max_streams: int = 1, graph_mode: str | None = None,
                max_buffer_s=_KEEP, settings=None, rollover: bool = True):
    """The engine the options ask for (not started): in-process vLLM or a remote server
    (``engine.factory``), wrapped in session rollover unless ``rollover`` is False (bench
    measures the bare engine). ``settings``: already built by ``engine_settings``."""
    from ..engine.factory import bare_engine, build_engine

    settings = settings or engine_settings(args, max_streams, graph_mode, max_buffer_s)
    verbose = logs.engine_verbose(logs.level_of(args))
    if rollover:
        return build_engine(settings, on_event=on_event, verbose=verbose)
    return bare_engine(settings, on_event=on_event, verbose=verbose)
