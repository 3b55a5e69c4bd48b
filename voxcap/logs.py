"""voxcap's log: the standard library's ``logging``, one rotating file per user, for bug reports.

Every module logs to ``logging.getLogger(__name__)`` (under the "voxcap" logger). ``setup`` is
called once by each front end (every command, the GUI) from ``-v``/``--log-level``:

- the file ``voxcap.log`` in the XDG state folder (``paths.state_dir()``, e.g.
  ~/.local/state/voxcap) gets INFO and above (or the level asked for), rotated at 1 MB, three
  old files kept: a few days of use, small enough to attach to a report;
- the terminal (stderr) gets log records only when asked for: with ``-v`` INFO and above,
  ``-vv`` DEBUG, ``--log-level LEVEL``; without, the commands' own lines (an error and its fix)
  stay the only ones there, and a traceback only ever shows with ``-vv``/``debug``;
- vLLM's own log (in the engine's processes) is shown when the level is INFO or lower
  (``engine_verbose``); otherwise what libraries write to stderr while vLLM starts (torch's
  "Triton not available", C++ warnings such as "NUMA binding", Python warnings, and all
  that vLLM's processes write later) goes to ``vllm.log`` next to the log
  (``library_output_to_log``), and voxcap's own lines reach the terminal through ``terminal()``;
  Python warnings of voxcap's process go to the log file too.

Privacy: no audio and no caption text is ever logged, unless VOXCAP_LOG_TEXT=1 is set (a person
debugging wrong text, on purpose): ``caption_text(text)`` is what a log call must use. The logs
still say what ran, with which arguments and from where: every log file (``open_private``:
voxcap.log and its rotations, vllm.log, vllm-server.log) is its owner's only (0600, in a
0700 folder), and one left readable by others (by an older voxcap) is made so on start.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from . import paths

LOG_NAME = "voxcap.log"
LIBRARY_LOG_NAME = "vllm.log"  # what vLLM's processes and the libraries write to stderr
LIBRARY_LOG_MAX = 5_000_000  # moved to vllm.log.1 at the next engine start past this size
LEVELS = ("debug", "info", "warning", "error")
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"
_ROOT = "voxcap"
_handlers: list[logging.Handler] = []


def log_path() -> Path:
    return paths.state_dir() / LOG_NAME


def level_from(verbose: int = 0, log_level: str | None = None) -> int | None:
    """The terminal's level: ``--log-level`` wins; else -v INFO, -vv DEBUG; None: no log
    records on the terminal."""
    if log_level:
        return getattr(logging, log_level.upper())
    return logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else None


def level_of(args) -> int | None:
    """The terminal's level from a command's parsed ``-v``/``--log-level``."""
    return level_from(getattr(args, "verbose", 0) or 0, getattr(args, "log_level", None))


def engine_verbose(level: int | None) -> bool:
    """Whether vLLM's own log is shown (it is noisy: only when INFO was asked for)."""
    return level is not None and level <= logging.INFO


def setup(level: int | None = None, *, file: bool | None = None,
          words: Callable[[str], str] | None = None) -> Path | None:
    """Configure the "voxcap" logger (again: earlier handlers are replaced). ``level``: the
    terminal's (None: no records there). Returns the log file's path, or None when it could not
    be opened (then one line says so on the terminal and the app runs on without it). ``file``:
    default on, off with VOXCAP_LOG_FILE=0. ``words``: how a record's text says the settings a
    core text names (``setting_refs``; the commands give their flags)."""
    root = logging.getLogger(_ROOT)
    for h in _warning_handlers:
        logging.getLogger("py.warnings").removeHandler(h)
    _warning_handlers.clear()
    for h in _handlers:
        root.removeHandler(h)
        h.close()
    _handlers.clear()
    file_level = logging.INFO if level is None else min(level, logging.INFO)
    root.setLevel(file_level)
    root.propagate = False
    if level is not None:
        term = logging.StreamHandler(sys.stderr)
        term.setLevel(level)
        term.setFormatter(_Terminal(level))
        _add(root, term, words)
    if file is None:
        file = os.environ.get("VOXCAP_LOG_FILE", "1") != "0"
    if not file:
        return None
    path = log_path()
    try:
        private_folder(path.parent)
        for n in range(1, BACKUPS + 1):  # rotations written by an older voxcap
            _make_private(path.with_name(f"{path.name}.{n}"))
        fh = _PrivateRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                         encoding="utf-8")
    except OSError as exc:
        print(f"warning: the log file {path} cannot be written ({exc.strerror or exc}); "
              "running without it", file=sys.stderr)
        return None
    fh.setLevel(file_level)
    fh.setFormatter(logging.Formatter(FORMAT))
    _add(root, fh, words)
    warnings_logger = logging.getLogger("py.warnings")
    if level is None:  # a library's DeprecationWarning is not the command's output
        logging.captureWarnings(True)
        warnings_logger.propagate = False
        warnings_logger.addHandler(fh)
        _warning_handlers.append(fh)
    else:  # -v: on the terminal, as Python shows them
        logging.captureWarnings(False)
        warnings_logger.propagate = True
    return path


def private_folder(folder: Path) -> Path:
    """``folder`` (made with its parents) readable by its owner only: 0700, an existing one
    of this user's too (one of another user's is left as it is)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if folder.stat().st_uid == os.getuid():
            folder.chmod(0o700)
    return folder


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """A file descriptor of the log ``path``, its owner's only: created 0600, an existing file
    made 0600; a symbolic link at ``path`` is refused (OSError), not followed."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def _make_private(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.close(open_private(path, os.O_RDONLY))


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """The rotating log, each new file (at start and after a rotation) made by ``open_private``."""

    def _open(self):
        return os.fdopen(open_private(Path(self.baseFilename)), "a", encoding=self.encoding,
                         errors=self.errors)


_warning_handlers: list[logging.Handler] = []
_terminal_stream = None  # voxcap's own stderr while library_output_to_log() is active
_redirect_lock = threading.Lock()


def terminal():
    """Where voxcap's own lines for a person go (progress, notices): stderr, also while
    ``library_output_to_log`` sends the file descriptor 2 to the library log."""
    return _terminal_stream or sys.stderr


def library_log_path() -> Path:
    return paths.state_dir() / LIBRARY_LOG_NAME


@contextlib.contextmanager
def library_output_to_log(enabled: bool = True):
    """Inside: this process's file descriptor 2 is ``vllm.log`` (appended), so the processes vLLM
    starts meanwhile write their stderr there for as long as they run, and so do C code and
    Python's ``sys.stderr`` here; ``terminal()`` is the real stderr. Put back on leaving. A
    no-op when not ``enabled`` (-v: the person asked for vLLM's log), when another one is
    active, or when stderr has no file descriptor (a test's capture)."""
    global _terminal_stream
    if not enabled or not _redirect_lock.acquire(blocking=False):
        yield None
        return
    saved = target = None
    try:
        try:
            sys.stderr.flush()
            fd = sys.stderr.fileno()
            if fd != 2:
                raise ValueError("sys.stderr is not file descriptor 2")
            path = library_log_path()
            private_folder(path.parent)
            if path.exists() and path.stat().st_size > LIBRARY_LOG_MAX:
                path.replace(path.with_name(path.name + ".1"))
            target = open_private(path)
            saved = os.dup(2)
            _terminal_stream = os.fdopen(os.dup(saved), "w", buffering=1,
                                         encoding=getattr(sys.stderr, "encoding", None) or "utf-8",
                                         errors="replace")
            os.dup2(target, 2)
        except (OSError, ValueError, AttributeError) as exc:  # no fd to redirect: leave it as it is
            logging.getLogger(__name__).info(
                "vLLM's and the libraries' output goes to this process's stderr, not to %s "
                "(%s: %s)", LIBRARY_LOG_NAME, type(exc).__name__, exc)
            yield None
            return
        yield path
    finally:
        if saved is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            stream, _terminal_stream = _terminal_stream, None
            if stream is not None:
                stream.close()
        if target is not None:
            os.close(target)
        _redirect_lock.release()


class _Terminal(logging.Formatter):
    """One line a record on the terminal; tracebacks only at DEBUG (the file has them all)."""

    def __init__(self, level: int) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.tracebacks = level <= logging.DEBUG

    def format(self, record: logging.LogRecord) -> str:
        if self.tracebacks:
            return super().format(record)
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


class _Worded(logging.Formatter):
    """Another formatter's text with its markers worded (``setting_refs``): the message and
    an exception's text alike."""

    def __init__(self, inner: logging.Formatter, words: Callable[[str], str]) -> None:
        super().__init__()
        self.inner, self.words = inner, words

    def format(self, record: logging.LogRecord) -> str:
        return self.words(self.inner.format(record))


def _add(root: logging.Logger, handler: logging.Handler,
         words: Callable[[str], str] | None = None) -> None:
    if words is not None and handler.formatter is not None:
        handler.setFormatter(_Worded(handler.formatter, words))
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
