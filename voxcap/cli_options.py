"""Command-line options shared by every command that starts an engine."""

from __future__ import annotations

import argparse

from .engine.settings import DEFAULT_GRAPH_MODE, GRAPH_MODES, EngineSettings


def add_engine_options(p: argparse.ArgumentParser, model_required: bool = True) -> None:
    g = p.add_argument_group("engine")
    g.add_argument("--model", required=model_required, metavar="DIR",
                   help="Voxtral Realtime model directory (params.json, tekken.json, weights)")
    g.add_argument("--dummy-weights", action="store_true",
                   help="random weights instead of the model's (self-check; text is gibberish)")
    g.add_argument("--graph-mode", default=DEFAULT_GRAPH_MODE, metavar="MODE",
                   help=f"CUDA graph mode: {', '.join(GRAPH_MODES)} (default {DEFAULT_GRAPH_MODE})")
    g.add_argument("--delay-ms", type=int, default=None, metavar="N",
                   help="transcription delay, 80-2400 in steps of 80 (default: the model's, 480)")
    g.add_argument("--max-model-len", type=int, default=8192, metavar="TOKENS",
                   help="max session length in tokens, 12.5 per second of audio (default 8192)")
    g.add_argument("--kv-cache-gib", type=float, default=None, metavar="GIB",
                   help="KV-cache memory budget (default: sized for the streams and session length)")
    g.add_argument("--dtype", default="auto", help="auto (bfloat16 on GPU, float32 on CPU), ...")
    g.add_argument("--eager", action="store_true",
                   help="no torch.compile and no graphs: faster start, slower steps")
    g.add_argument("--verbose", "-v", action="store_true", help="show vLLM's log")


def engine_settings(args, max_streams: int = 1, graph_mode: str | None = None) -> EngineSettings:
    """Validated settings from parsed options (raises ConfigError with the fix)."""
    return EngineSettings(
        model_dir=args.model, dummy_weights=args.dummy_weights,
        graph_mode=graph_mode or args.graph_mode, transcription_delay_ms=args.delay_ms,
        max_model_len=args.max_model_len, max_streams=max_streams, kv_cache_gib=args.kv_cache_gib,
        dtype=args.dtype, enforce_eager=args.eager,
    ).validated()
