"""Every ``voxcap`` command, and the one registry of them (``COMMAND_MODULES``).

Each command lives in a module of this package exposing ``add_parser(subparsers)`` and
``run(args) -> int``; this file only registers and dispatches. The library packages (engine,
capture, captions, app, gui) hold no command code.

Every command takes ``-v``/``-vv``/``--log-level`` (added here, ``voxcap.logs``): the log file
is always written; the terminal shows what was asked for, vLLM's own log from INFO down.
Errors a person can fix are printed as one line plus the fix (exit code 2).

A command module whose third-party dependency is missing is left out (and named if its command
is asked for), so the others, ``voxcap doctor`` first of all, still run in a broken or bare
environment.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from .. import __version__, logs, paths
from ..errors import VoxcapError
from .flag_words import in_flags

log = logging.getLogger(__name__)
EXIT_USER_ERROR = 2
# The order ``voxcap --help`` lists them in: the everyday ones first (the app, live captions, a
# file, the check), then setting up (the model, devices, caches), the server, and the self-check
# and developer tools last.
COMMAND_MODULES = (
    "voxcap.commands.gui",
    "voxcap.commands.live",
    "voxcap.commands.transcribe",
    "voxcap.commands.sessions",
    "voxcap.commands.doctor",
    "voxcap.commands.download",
    "voxcap.commands.translate_models",
    "voxcap.commands.devices",
    "voxcap.commands.serve",
    "voxcap.commands.prepare",
    "voxcap.commands.tiny_model",
    "voxcap.commands.bench",
)


def add_log_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("logging")
    g.add_argument("--verbose", "-v", action="count", default=0,
                   help="the log on the terminal too: -v info (and vLLM's own log), -vv debug "
                        "with tracebacks")
    g.add_argument("--log-level", choices=logs.LEVELS, type=str.lower, metavar="LEVEL",
                   help=f"the log on the terminal from this level: {', '.join(logs.LEVELS)} "
                        f"(instead of -v); the log file ({logs.log_path()}) always has info and "
                        "above, with tracebacks")


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
            add_log_options(sub.choices[command])
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
    logs.setup(logs.level_of(args), words=in_flags)
    sweep_dead_runs()
    from ..engine.vllm_adapter.env import use_voxcap_caches

    use_voxcap_caches()  # before anything imports vLLM: its caches go under voxcap's folder
    log.info("voxcap %s: %s", __version__, args.command)
    try:
        return runners[args.command](args)
    except VoxcapError as exc:
        # shown to the person below; the log keeps where it came from (not on the terminal)
        log.info("voxcap %s: %s (fix: %s)", args.command, exc.message, exc.fix, exc_info=True)
        print(f"error: {in_flags(exc.message)}", file=sys.stderr)
        if fix := fix_in_flags(exc):
            print(f"  fix: {fix}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        log.info("voxcap %s: interrupted", args.command)
        return 130
    except Exception:
        log.exception("voxcap %s failed", args.command)
        raise


def sweep_dead_runs() -> None:
    """What runs killed with ``kill -9`` (or crashed) left in the temporary folder: the engine's
    folder, PipeWire's echo canceller's (paths.run_tempdir), removed at every start, not only
    when the next of its kind starts."""
    if removed := paths.remove_dead_run_tempdirs():
        log.info("removed %d temporary folders that ended runs of voxcap left", removed)


def fix_in_flags(exc: VoxcapError) -> str:
    """The fix in the terminal's words, with the flag of the setting a ``ConfigError`` names
    (the app says the row of Settings instead: ``gui.settings.setting_words``)."""
    from ..app.settings import AppSettings
    from ..settings_schema import spec_named

    message, fix = in_flags(exc.message), in_flags(exc.fix)
    spec = spec_named(AppSettings, getattr(exc, "setting", "") or "")
    if spec is None or not spec.flag or spec.flag in f"{message} {fix}":
        return fix
    return f"{fix} ({spec.flag})" if fix else spec.flag


if __name__ == "__main__":
    sys.exit(main())
