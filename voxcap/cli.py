"""The ``voxcap`` command: headless transcription, benchmark, self-check model.

Errors a person can fix are printed as one line plus the fix (exit code 2); vLLM's own log
is shown only with --verbose.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .engine.settings import DEFAULT_GRAPH_MODE, GRAPH_MODES, EngineSettings
from .errors import VoxcapError

EXIT_USER_ERROR = 2


def _engine_options(p: argparse.ArgumentParser, model_required: bool = True) -> None:
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


def _settings(args, max_streams: int = 1, graph_mode: str | None = None) -> EngineSettings:
    return EngineSettings(
        model_dir=args.model, dummy_weights=args.dummy_weights,
        graph_mode=graph_mode or args.graph_mode, transcription_delay_ms=args.delay_ms,
        max_model_len=args.max_model_len, max_streams=max_streams, kv_cache_gib=args.kv_cache_gib,
        dtype=args.dtype, enforce_eager=args.eager,
    ).validated()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="voxcap", description="Live captions with Voxtral Realtime on vLLM.")
    parser.add_argument("--version", action="version", version=f"voxcap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    t = sub.add_parser("transcribe", help="transcribe an audio file through the engine",
                       description="Stream an audio file (WAV/FLAC/OGG/MP3, any rate and channels) "
                                   "through the engine and print text as it arrives.")
    t.add_argument("audio", metavar="AUDIO")
    t.add_argument("--realtime", action="store_true",
                   help="feed audio at wall-clock speed like a live source (default: as fast as possible)")
    t.add_argument("-o", "--output", metavar="OUT", help="write the transcript (.txt or .jsonl)")
    t.add_argument("--quiet", "-q", action="store_true", help="do not print text or progress")
    _engine_options(t)

    b = sub.add_parser("bench", help="compare CUDA graph modes on this machine",
                       description="For each graph mode and stream count, run N seconds of "
                                   "speech-like audio per stream through a fresh engine as fast as "
                                   "possible; report tokens/s, step latency and start-up time.")
    b.add_argument("--modes", default="PIECEWISE,FULL_DECODE_ONLY", metavar="LIST",
                   help="comma-separated graph modes (default PIECEWISE,FULL_DECODE_ONLY)")
    b.add_argument("--streams", default="1", metavar="LIST", help="comma-separated stream counts")
    b.add_argument("--seconds", type=float, default=30.0, metavar="N", help="audio per stream")
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _engine_options(b)

    m = sub.add_parser("make-tiny-model", help="write a tiny test model (use with --dummy-weights)",
                       description="Write params.json and tekken.json of a tiny Voxtral Realtime "
                                   "model: checks an install end to end without the 9 GB download.")
    m.add_argument("directory", metavar="DIR")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "transcribe":
            from .transcribe import run_transcribe

            return run_transcribe(args, _settings(args))
        if args.command == "bench":
            from .bench import run_bench

            return run_bench(args, _settings)
        if args.command == "make-tiny-model":
            from .engine.tiny_model import write_tiny_model

            print(f"tiny model written to {write_tiny_model(args.directory)}")
            return 0
    except VoxcapError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.fix:
            print(f"  fix: {exc.fix}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130
    parser.error(f"unknown command {args.command}")
    return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
