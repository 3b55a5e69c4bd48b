"""The ``voxcap`` command. Each subcommand lives in its own module exposing
``add_parser(subparsers)`` and ``run(args) -> int``; this file only dispatches.

Errors a person can fix are printed as one line plus the fix (exit code 2); vLLM's own log
is shown only with --verbose.

A command module whose third-party dependency is missing is left out (and named if its command
is asked for), so the others, ``voxcap doctor`` first of all, still run in a broken or bare
environment.
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
    "voxcap.doctor",
    "voxcap.gui.cli",
)


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(prog="voxcap",
                                     description="Live captions with Voxtral Realtime on vLLM.")
    parser.add_argument("--version", action="version", version=f"voxcap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners = {}
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            if (getattr(exc, "name", None) or "voxcap").startswith("voxcap"):
                raise  # voxcap's own module: a bug, not a missing dependency
            UNAVAILABLE[name] = f"{exc}"
            continue
        for command in module.add_parser(sub):
            runners[command] = module.run
    return parser, runners


UNAVAILABLE: dict[str, str] = {}  # command module -> why it could not be loaded


def _unavailable_command(argv: list[str], runners: dict) -> str | None:
    """The command asked for when it is unknown because a module could not be loaded."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None or command in runners or not UNAVAILABLE:
        return None
    return command


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    missing = _unavailable_command(argv, runners)
    if missing is not None:
        why = "; ".join(f"{m} ({e})" for m, e in UNAVAILABLE.items())
        print(f"error: `voxcap {missing}` is not available: a package voxcap needs is missing: "
              f"{why}", file=sys.stderr)
        print("  fix: reinstall voxcap (installer/install.sh, or pip install 'voxcap[audio,gui]'); "
              "`voxcap doctor` checks the installation", file=sys.stderr)
        return EXIT_USER_ERROR
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
