"""SIGTERM and SIGHUP quit the app as Ctrl+Q does: a desktop logout sends them to every process
of the session at once (``kill`` sends the first). Without this the app died where it stood,
its engine's folder, vLLM's files and its socket left in the temporary folder, the window
positions unsaved. A second one while the app quits leaves at once.

Python runs a signal's handler only between bytecodes, and Qt's event loop runs in C++: the
signal's number is written to a socket (``signal.set_wakeup_fd``) that the event loop watches.
A process forked from the app (vLLM's engine core) gets the default handlers and no wakeup
socket: its own SIGTERM, written to the inherited socket, read as a second one here."""

from __future__ import annotations

import logging
import os
import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier

from ..quit_signals import QUIT_SIGNALS, forked_children_get_defaults

log = logging.getLogger(__name__)


class QuitOnSignals(QObject):
    """``quit()`` on the first of ``QUIT_SIGNALS``, ``leave()`` on the next; keep the object."""

    def __init__(self, quit: Callable[[], None], leave: Callable[[], None]) -> None:
        super().__init__()
        self._quit, self._leave = quit, leave
        self._received = 0
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)
        signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        for sig in QUIT_SIGNALS:
            signal.signal(sig, _noted)  # not the default, which ends the process at once
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._arrived)
        forked_children_get_defaults()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        signal.set_wakeup_fd(-1)
        self._read.close()
        self._write.close()

    def _arrived(self) -> None:
        try:
            numbers = self._read.recv(64)
        except BlockingIOError:
            return
        for number in numbers:  # other handled signals (SIGINT) are written here too
            if number in QUIT_SIGNALS:
                self._received += 1
                name = signal.Signals(number).name
                if self._received == 1:
                    log.info("%s received: quitting", name)
                    self._quit()
                else:
                    log.warning("%s received while quitting: leaving at once", name)
                    self._leave()


def _noted(signum, frame) -> None:
    """The wakeup socket carries the signal to the event loop."""
