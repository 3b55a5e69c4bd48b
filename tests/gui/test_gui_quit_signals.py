"""SIGTERM or SIGHUP quits the app as Ctrl+Q does (gui/quit_signals.py), once, however many of the
app's processes get it: at a logout all do, a forked engine core among them. Another one while
the app quits leaves at once. A Qt event loop in a process of its own, with a forked child."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import psutil

APP = """
import os, sys, time
from PySide6.QtCore import QCoreApplication, QTimer
from voxcap.gui.quit_signals import QuitOnSignals
app = QCoreApplication([])

def quit():
    print("quit", flush=True)
    QTimer.singleShot(int(sys.argv[1]), app.quit)  # the controller's shutdown takes a while

def leave():
    print("leave", flush=True)
    os._exit(3)

signals = QuitOnSignals(quit, leave)
child = os.fork()  # as vLLM forks its engine core from the app
if child == 0:
    print("child", flush=True)  # its at-fork hooks have run
    time.sleep(60)
    os._exit(0)
app.exec()
_, status = os.waitpid(child, 0)
print("out; the child ended by signal", os.WTERMSIG(status), flush=True)
"""


def _app(quit_ms: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", APP, str(quit_ms)], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    line = proc.stdout.readline()
    assert line == "child\n", line
    (child,) = [p.pid for p in psutil.Process(proc.pid).children()]
    return proc, child


def test_sigterm_to_the_group_quits_the_app_once():
    app, child = _app(500)
    os.killpg(app.pid, signal.SIGTERM)  # the app and its forked child at once
    code = app.wait(30)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGKILL)  # had it lived on (it holds the pipe open)
    # the child's SIGTERM is not taken for a second one by the app, and it dies of it, as a
    # process with no handler of its own does
    assert (app.stdout.read(), code) == (f"quit\nout; the child ended by signal {int(signal.SIGTERM)}\n", 0)


def test_sighup_quits_and_another_signal_leaves_at_once():
    app, child = _app(60_000)
    os.kill(app.pid, signal.SIGHUP)
    assert app.stdout.readline() == "quit\n"
    os.kill(app.pid, signal.SIGTERM)
    assert app.wait(30) == 3
    os.kill(child, signal.SIGKILL)  # it holds the pipe open
    assert app.stdout.read() == "leave\n"
