"""The real app in a process of its own, steered by lines on stdin (atspi_app.py,
real_engine_app.py): the Qt application, the app on a given engine factory and fake audio,
journalling under $VOXCAP_DATA_DIR/sessions, and the stdin reader."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from voxcap.app.controller import SessionController


def qt_app() -> QApplication:
    qapp = QApplication(["voxcap"])
    qapp.setApplicationName("voxcap")
    qapp.setApplicationDisplayName("voxcap")
    qapp.setQuitOnLastWindowClosed(False)
    return qapp


def voxcap_app(settings, engine_factory, audio):
    from voxcap.gui.application import VoxcapApp

    root = Path(os.environ["VOXCAP_DATA_DIR"]) / "sessions"
    return VoxcapApp(settings, controller_factory=lambda publish: SessionController(
        publish, engine_factory=engine_factory, audio=audio, journal_root=root),
        sessions_root=root, persist=False, use_tray=False, first_run=False)


class _Commands(QObject):
    line = Signal(str)


def steer_by_stdin(handle) -> QObject:
    """``handle(line)`` on the GUI thread for each line on stdin; keep the returned object."""
    commands = _Commands()
    commands.line.connect(handle)

    def read() -> None:
        for raw in sys.stdin:
            commands.line.emit(raw.strip())
    threading.Thread(target=read, daemon=True).start()
    return commands


def run_steered(qapp: QApplication, app, handle) -> int:
    """Steer ``app`` by ``handle(line)`` (see ``steer_by_stdin``; "quit" quits it as Ctrl+Q
    does, each line is answered "done LINE" once handled), start it, say its pid (the test
    waits for it), run until it quits."""
    def steer(line: str) -> None:
        if line == "quit":
            app.quit()
        else:
            handle(line)
        print(f"done {line}", flush=True)

    commands = steer_by_stdin(steer)  # noqa: F841 - kept while the app runs
    app.start()
    print(f"pid {os.getpid()}", flush=True)
    return qapp.exec()


def caption_then(app, feed, wait_s: float = 30.0) -> None:
    """Start captioning, and once it is on (or after ``wait_s``) call ``feed()`` on a thread
    of its own: the audio the test gives the fake sources."""
    app.toggle_captioning()

    def run() -> None:
        deadline = time.monotonic() + wait_s
        while app.state != "on" and time.monotonic() < deadline:
            time.sleep(0.05)
        feed()
    threading.Thread(target=run, daemon=True).start()
