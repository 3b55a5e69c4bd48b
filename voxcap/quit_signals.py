"""SIGTERM and SIGHUP end voxcap as the person's own stop does (Ctrl+Q in the app, Ctrl-C in a
terminal): a desktop logout sends SIGTERM to every process of the session (``kill`` sends it
too), and closing a terminal window sends SIGHUP to what runs in it. Their default ends the
process where it stands: the engine's folder and vLLM's files left in the temporary folder, the
journal without its end. The first one stops in order; the next one leaves at once
(``leave_at_once``). The app's event loop hears them through gui/quit_signals.py; a terminal
command counts them (``QuitSignals``) and acts between events.

A process forked from voxcap while its handlers are set (vLLM's engine core) gets the default
ones back: the handlers are the app's, and its children leave the terminal's process group
(engine/vllm_adapter/plugin.py), so the app stops them in order."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from types import FrameType

from . import paths

log = logging.getLogger(__name__)
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def leave_at_once(code: int) -> None:
    """Leave now: the temporary folders removed and the log flushed, and nothing else run,
    neither the exit handlers nor the interpreter's finalisation. Those tore torch, Qt and vLLM
    down after the work was done: 2 s on the tiny CPU engine, and multiprocessing's handler
    waited for an engine core still stopping (5.9 s on a loaded CPU), or the interpreter could
    abort around an engine thread still starting ("exception not rethrown"). vLLM's processes
    die with this one (PR_SET_PDEATHSIG)."""
    paths.remove_run_tempdirs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a terminal gone (SIGHUP)
            stream.flush()
    os._exit(code)


_forked_get_defaults = False


def forked_children_get_defaults() -> None:
    """From now on a process forked from this one starts with the default handlers of
    ``QUIT_SIGNALS`` (its own at-fork hooks, run after this one, may add more)."""
    global _forked_get_defaults
    if not _forked_get_defaults:
        os.register_at_fork(after_in_child=_defaults)
        _forked_get_defaults = True


def _defaults() -> None:
    for sig in QUIT_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


class QuitSignals:
    """While inside: the first of ``QUIT_SIGNALS`` only counts (``received`` names it; the
    caller stops in order between events), the next one leaves at once, exit code 128 + its
    number. One ignored at the start (``nohup``) stays ignored: the person asked for that."""

    def __init__(self) -> None:
        self.received = ""  # "SIGTERM" / "SIGHUP": the first one's name
        self._old: dict[int, object] = {}

    def __enter__(self) -> QuitSignals:
        for sig in QUIT_SIGNALS:
            if signal.getsignal(sig) == signal.SIG_IGN:
                continue
            try:
                self._old[sig] = signal.signal(sig, self._arrived)
            except ValueError:  # not the main thread (a test's): as before
                log.debug("signal %s handler not installed (not the main thread)", sig)
        forked_children_get_defaults()
        return self

    def _arrived(self, signum: int, frame: FrameType | None) -> None:
        if not self.received:  # said by the caller's loop, in order with its other lines
            self.received = signal.Signals(signum).name
            return
        log.warning("%s received while stopping: leaving at once", signal.Signals(signum).name)
        leave_at_once(128 + signum)

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():  # None: a handler set outside Python
            signal.signal(sig, old if old is not None else signal.SIG_DFL)  # type: ignore[arg-type]
        self._old.clear()
