"""The one-app-per-user socket is gone after the app quits (also when it then leaves with
os._exit, as it does), and a socket a killed app left is taken over by the next start and gone
after it quits, with its folder. Each app is a process of its own with its own
temporary folder (TMPDIR: the socket is in its voxcap-<uid>) and config folder (the socket's
name). Another user cannot keep the app from starting: a socket of theirs at the name the socket
had in the shared temporary folder, or a voxcap-<uid> folder of theirs, gets no message."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from support.other_user import NOBODY, needs_root, other_user

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
    from voxcap import paths
    paths.remove_run_tempdirs()
    os._exit(0)  # as application.py leaves (gui/application.py leave_at_once)
app.exec()
"""


def _app(tmp_path, how: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "VOXCAP_CONFIG_DIR": str(tmp_path / "cfg"),
           "XDG_RUNTIME_DIR": ""}
    return subprocess.Popen([sys.executable, "-c", APP, how], env=env, stdout=subprocess.PIPE,
                            text=True)


def _sockets(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "tmp").glob(f"voxcap-{os.getuid()}/gui-*"))


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
    assert list((tmp_path / "tmp").iterdir()) == []  # voxcap-<uid> too, once empty


# Another user's program listening on a Unix socket anyone may connect to; prints what it gets.
SQUATTER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen()
print("listening", flush=True)
s.settimeout(8)
try:
    c, _ = s.accept()
    c.settimeout(2)
    print(c.recv(100).decode(), flush=True)
except OSError:
    pass
"""

SEND = ("from voxcap.gui.instance import InstanceServer, send_to_running\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "app = QCoreApplication([])\n"
        "print('sent:', send_to_running('show'), 'listening:', InstanceServer().listen())")


def _send_show(tmp: Path, cfg: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp), "VOXCAP_CONFIG_DIR": str(cfg), "XDG_RUNTIME_DIR": ""}
    return subprocess.run([sys.executable, "-c", SEND], env=env, capture_output=True, text=True,
                          timeout=60)


@needs_root
def test_another_users_socket_does_not_stop_the_app(tmp_path):
    """A socket another user bound at the name the instance socket had in the shared temporary
    folder (voxcap-<hash of the config folder>), then a voxcap-<uid> folder they made first."""
    tmp = Path(tempfile.mkdtemp(prefix="voxcap-test-shared-"))  # stands in for /tmp: 1777
    os.chmod(tmp, 0o1777)
    cfg = tmp_path / "cfg"
    old_name = f"voxcap-{hashlib.sha1(str(cfg.resolve()).encode()).hexdigest()[:12]}"
    try:
        with other_user(SQUATTER, str(tmp / old_name), timeout=15) as spy:
            r = _send_show(tmp, cfg)
        assert "show" not in spy.output
        assert r.stdout.strip() == "sent: False listening: True", r.stderr
        subprocess.run(["rm", "-rf", str(tmp / f"voxcap-{os.getuid()}")], check=True)  # if still there
        made = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                               "mkdir", "-m", "777", str(tmp / f"voxcap-{os.getuid()}")])
        assert made.returncode == 0
        r = _send_show(tmp, cfg)
        assert r.stdout.strip() == "sent: False listening: False", r.stderr
        assert (f"{tmp}/voxcap-{os.getuid()} is not a folder of this user's (uid {NOBODY} made it): "
                "remove it (as root), or set TMPDIR to a folder of your own") in r.stderr
        assert list((tmp / f"voxcap-{os.getuid()}").iterdir()) == []
    finally:
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
