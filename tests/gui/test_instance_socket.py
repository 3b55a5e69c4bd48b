"""The one-app-per-user socket is gone after the app quits (also when it then leaves with
os._exit, as it does while its engine still stops), and a socket a killed app left is taken
over by the next start and gone after it quits. Each app is a process of its own with its own
temporary folder (TMPDIR, where Qt puts the socket) and config folder (the socket's name)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

APP = """
import os, sys
from PySide6.QtCore import QCoreApplication, QTimer
from voxcap.gui.instance import InstanceServer, server_name
app = QCoreApplication([])
server = InstanceServer()
print("listening:", server.listen(), server_name(), flush=True)
if sys.argv[1] == "quit":
    QTimer.singleShot(100, app.quit)
    app.exec()
    os._exit(0)  # as application.py leaves while an engine still stops
app.exec()
"""


def _app(tmp_path, how: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "VOXCAP_CONFIG_DIR": str(tmp_path / "cfg")}
    return subprocess.Popen([sys.executable, "-c", APP, how], env=env, stdout=subprocess.PIPE,
                            text=True)


def _sockets(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "tmp").glob("voxcap-*"))


def test_the_instance_socket_goes_at_quit_and_after_a_kill(tmp_path):
    (tmp_path / "tmp").mkdir()
    app = _app(tmp_path, "quit")
    assert app.stdout.readline().startswith("listening: True")
    assert app.wait(30) == 0
    assert _sockets(tmp_path) == []

    killed = _app(tmp_path, "hang")
    assert killed.stdout.readline().startswith("listening: True")
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    assert len(_sockets(tmp_path)) == 1  # kill -9 leaves it
    app = _app(tmp_path, "quit")
    assert app.stdout.readline().startswith("listening: True")  # taken over
    assert app.wait(30) == 0
    assert _sockets(tmp_path) == []
