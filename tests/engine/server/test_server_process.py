"""The child that `voxcap serve` runs vLLM's server in (engine/server/process.py), with small
stand-in programs instead of vLLM: tied to voxcap from its first moment (kill -9 of voxcap takes
it along), its output into the log and, with -v, onto the terminal, and a server that stops
while starting reported with its last error line."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from voxcap.engine.server.process import ServerProcess, child_env
from voxcap.errors import EngineError


def test_output_goes_to_the_log_and_follows_onto_the_terminal(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("an earlier run\n")
    server = ServerProcess(["/bin/sh", "-c", "echo starting; sleep 0.3; echo "
                            "'ValueError: not enough memory'; exit 3"], child_env({}), log).start()
    out = io.StringIO()
    follower = server.follow(out)
    with pytest.raises(EngineError) as e:
        server.wait_healthy("127.0.0.1", 9, timeout=60, poll_s=0.05)  # nothing listens on 9
    assert "stopped while starting (exit code 3): ValueError: not enough memory" in e.value.message
    assert str(log) in e.value.fix
    follower.join(5)
    assert out.getvalue() == "starting\nValueError: not enough memory\n"  # this run's only
    assert log.read_text().startswith("an earlier run\nstarting\n")


def test_the_server_dies_with_voxcap_however_voxcap_dies(tmp_path):
    """voxcap (here a stand-in parent) is SIGKILLed: its server child goes at once, by the
    kernel's parent-death signal set before the server's program even started."""
    pidfile = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from voxcap.engine.server.process import ServerProcess, child_env\n"
        f"s = ServerProcess(['/bin/sleep', '120'], child_env({{}}), Path({str(tmp_path)!r}) / 'l')\n"
        f"open({str(pidfile)!r}, 'w').write(str(s.start().pid))\n"
        "time.sleep(120)\n")], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()):
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        child = psutil.Process(int(pidfile.read_text()))
        deadline = time.monotonic() + 30  # until the launcher has exec'd the server's program
        while child.name() != "sleep":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert child.environ()["VOXCAP_APP_PID"] == str(child.pid)  # the app, for the plugin
        assert os.getsid(child.pid) == child.pid  # its own session: a Ctrl-C reaches voxcap only
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        child.wait(5)  # raises TimeoutExpired if it outlives voxcap
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if pidfile.exists() and pidfile.read_text():  # in its own session: not in that group
            try:
                left = psutil.Process(int(pidfile.read_text()))
                if left.name() == "sleep":
                    left.kill()
            except psutil.NoSuchProcess:
                pass


def test_stop_is_sigterm_then_sigkill(tmp_path):
    log = tmp_path / "l"
    server = ServerProcess(["/bin/sh", "-c", "trap '' TERM; echo ready; sleep 60"],
                           child_env({}), log).start()
    deadline = time.monotonic() + 30
    while "ready" not in (log.read_text() if log.exists() else ""):  # its trap is set
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert server.stop(timeout=1) == -signal.SIGKILL  # it ignored SIGTERM
    server = ServerProcess(["/bin/sleep", "60"], child_env({}), tmp_path / "l").start()
    assert server.stop(timeout=10) == -signal.SIGTERM
