"""The ``voxcap`` command. Each subcommand lives in its own module exposing
``add_parser(subparsers)`` and ``run(args) -> int``; this file only dispatches.

Errors a person can fix are printed as one line plus the fix (exit code 2); vLLM's own log
is shown only with --verbose.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import VoxcapError

EXIT_USER_ERROR = 2
COMMAND_MODULES = (
    "voxcap.transcribe",
    "voxcap.bench",
    "voxcap.engine.tiny_model",
    "voxcap.sessions_cli",
    "voxcap.capture.cli",
    "voxcap.live",
)


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(prog="voxcap",
                                     description="Live captions with Voxtral Realtime on vLLM.")
    parser.add_argument("--version", action="version", version=f"voxcap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners = {}
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        for command in module.add_parser(sub):
            runners[command] = module.run
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return runners[args.command](args)
    except VoxcapError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.fix:
            print(f"  fix: {exc.fix}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
