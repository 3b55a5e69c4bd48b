"""voxcap's log: the standard library's ``logging``, one rotating file per user, for bug reports.

Every module logs to ``logging.getLogger(__name__)`` (under the "voxcap" logger). ``setup`` is
called once by each front end (every command, the GUI) from ``-v``/``--log-level``:

- the file ``voxcap.log`` in the XDG state folder (``paths.state_dir()``, e.g.
  ~/.local/state/voxcap) gets INFO and above (or the level asked for), rotated at 1 MB, three
  old files kept: a few days of use, small enough to attach to a report;
- the terminal (stderr) gets only what was asked for: nothing below WARNING by default, INFO
  with ``-v``, DEBUG with ``-vv`` or ``--log-level debug``;
- vLLM's own log (in the engine's processes) is shown when the level is INFO or lower
  (``engine_verbose``).

Privacy: no audio and no caption text is ever logged, unless VOXCAP_LOG_TEXT=1 is set (a person
debugging wrong text, on purpose): ``caption_text(text)`` is what a log call must use.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections import deque
from pathlib import Path

from . import paths

LOG_NAME = "voxcap.log"
LEVELS = ("debug", "info", "warning", "error")
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"
_ROOT = "voxcap"
_handlers: list[logging.Handler] = []


def log_path() -> Path:
    return paths.state_dir() / LOG_NAME


def level_from(verbose: int = 0, log_level: str | None = None) -> int:
    """The terminal's level: ``--log-level`` wins; else -v INFO, -vv DEBUG, none WARNING."""
    if log_level:
        return getattr(logging, log_level.upper())
    return logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else logging.WARNING


def level_of(args) -> int:
    """The terminal's level from a command's parsed ``-v``/``--log-level``."""
    return level_from(getattr(args, "verbose", 0) or 0, getattr(args, "log_level", None))


def engine_verbose(level: int) -> bool:
    """Whether vLLM's own log is shown (it is noisy: only when INFO was asked for)."""
    return level <= logging.INFO


def setup(level: int = logging.WARNING, *, console: bool = True,
          file: bool | None = None) -> Path | None:
    """Configure the "voxcap" logger (again: earlier handlers are replaced). Returns the log
    file's path, or None when it could not be opened (then a warning goes to the terminal and
    the app runs on without it). ``file``: default on, off with VOXCAP_LOG_FILE=0."""
    root = logging.getLogger(_ROOT)
    for h in _handlers:
        root.removeHandler(h)
        h.close()
    _handlers.clear()
    root.setLevel(min(level, logging.INFO))
    root.propagate = False
    fmt = logging.Formatter(FORMAT)
    if console:
        term = logging.StreamHandler(sys.stderr)
        term.setLevel(level)
        term.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        _add(root, term)
    if file is None:
        file = os.environ.get("VOXCAP_LOG_FILE", "1") != "0"
    if not file:
        return None
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                  encoding="utf-8", delay=True)
    except OSError as exc:
        root.warning("the log file %s cannot be written (%s); logging to the terminal only",
                     path, exc.strerror or exc)
        return None
    fh.setLevel(min(level, logging.INFO))
    fh.setFormatter(fmt)
    _add(root, fh)
    return path


def _add(root: logging.Logger, handler: logging.Handler) -> None:
    root.addHandler(handler)
    _handlers.append(handler)


def tail(lines: int = 200) -> str:
    """The last ``lines`` lines of the log (for "Copy diagnostics"), or a note saying why none."""
    path = log_path()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines))
    except FileNotFoundError:
        return f"(no log yet at {path})\n"
    except OSError as exc:
        return f"(the log {path} cannot be read: {exc.strerror or exc})\n"


def text_allowed() -> bool:
    """Whether caption text and audio may appear in the log (VOXCAP_LOG_TEXT=1)."""
    return os.environ.get("VOXCAP_LOG_TEXT") == "1"


def caption_text(text: str) -> str:
    """Caption text as a log record may show it: its length only, unless VOXCAP_LOG_TEXT=1."""
    return repr(text) if text_allowed() else f"<{len(text)} chars>"
