"""``voxcap-gui``: what the desktop launcher (voxcap.desktop) runs.

It starts ``voxcap gui``. Started by a double-click there is no terminal to read an error in, so
when the app cannot start (a missing system library, a broken install) the reason and its fix are
shown in a window — Qt's if Qt loads, else zenity, kdialog, xmessage or a desktop notification —
and kept in ``launcher.log`` in voxcap's cache folder. ``voxcap-gui --version`` prints the version
(the installer's and the tests' check that the launcher's command runs).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
import traceback

from . import __version__

TITLE = "voxcap could not start"
LOG_NAME = "launcher.log"


def log_path():
    from . import paths

    return paths.cache_dir() / LOG_NAME


def _log(text: str) -> str:
    """Append to the launcher log; return its path ("" if it cannot be written)."""
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} voxcap {__version__}\n{text}\n")
        return str(path)
    except Exception:  # noqa: BLE001 - the message box matters more than the log
        return ""


def _qt_message(text: str) -> bool:
    try:
        from .gui.qt_probe import error_box

        error_box(TITLE, text)
        return True
    except Exception:  # noqa: BLE001 - Qt itself may be what is broken: the next way is tried
        _log(f"the Qt message box failed:\n{traceback.format_exc()}")
        return False


def _tool_message(text: str) -> bool:
    for argv in (["zenity", "--error", "--no-wrap", f"--title={TITLE}", f"--text={text}"],
                 ["kdialog", "--title", TITLE, "--error", text],
                 ["xmessage", "-center", f"{TITLE}\n\n{text}"],
                 ["notify-send", "--urgency=critical", TITLE, text]):
        if shutil.which(argv[0]) is None:
            continue
        try:
            if subprocess.run(argv, timeout=3600, check=False).returncode in (0, 1):
                return True
        except (OSError, subprocess.SubprocessError):
            continue
    return False


def show_error(text: str) -> None:
    """Show ``text`` to the person who double-clicked (and print it for a terminal)."""
    print(f"{TITLE}:\n{text}", file=sys.stderr)
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return
    if os.environ.get("VOXCAP_LAUNCHER_NO_QT") or not _qt_message(text):
        _tool_message(text)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["--version"], ["-V"]):
        print(f"voxcap {__version__}")
        return 0
    stderr = io.StringIO()
    try:
        from .cli import main as cli_main

        with _tee_stderr(stderr):
            code = cli_main(["gui", *argv])
    except SystemExit as exc:  # argparse on a bad option
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception:  # noqa: BLE001 - a broken install: say so instead of vanishing
        trace = traceback.format_exc()
        where = _log(trace)
        show_error("The app failed to start because of an error in this installation:\n\n"
                   f"{trace.strip().splitlines()[-1]}\n\nRe-running the installer usually fixes "
                   "this. To see what is missing, open a terminal and run:  voxcap doctor"
                   + (f"\n\nDetails: {where}" if where else ""))
        return 1
    if code not in (0, None):
        said = "\n".join(stderr.getvalue().strip().splitlines()[-12:])  # the end says why
        where = _log(said or f"exit code {code}")
        show_error((said or f"voxcap stopped with exit code {code}.")
                   + "\n\nTo check the installation, open a terminal and run:  voxcap doctor"
                   + (f"\n\nDetails: {where}" if where else ""))
    return int(code or 0)


@contextlib.contextmanager
def _tee_stderr(buffer: io.StringIO):
    """Keep what the app writes to stderr (its ``error: ... fix: ...`` lines) for the message
    box, and still pass it on (to a terminal or the desktop's log)."""
    original = sys.stderr

    class Tee(io.TextIOBase):
        def write(self, s: str) -> int:
            buffer.write(s[: max(0, 20000 - buffer.tell())])
            return original.write(s)

        def flush(self) -> None:
            original.flush()

        def fileno(self) -> int:  # the library log (logs.py) moves file descriptor 2 under it
            return original.fileno()

    sys.stderr = Tee()
    try:
        yield
    finally:
        sys.stderr = original


if __name__ == "__main__":
    sys.exit(main())
