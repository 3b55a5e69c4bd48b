"""The PipeWire echo canceller's folder (its config and log) in the temporary folder is named
after the app's process: one a killed app left is removed when the next canceller is made, and
a stopped canceller's goes at once. Each app a process of its own with its own TMPDIR."""

from __future__ import annotations

import os
import subprocess
import sys

MAKE = """
import sys, time
from voxcap.capture.pw_echo import PipeWireEchoProcess
proc = PipeWireEchoProcess("mic", "master", "voxcap_ec_mic_test", "test")
print(proc.config.parent.name, flush=True)
if sys.argv[1] == "stop":
    proc.stop()
else:
    time.sleep(60)
"""


def _app(tmp_path, how: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", MAKE, how], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})


def test_a_killed_apps_echo_folder_goes_at_the_next_start(tmp_path):
    killed = _app(tmp_path, "hang")
    folder = killed.stdout.readline().strip()
    assert folder.startswith(f"voxcap-ec-{killed.pid}-"), folder
    killed.kill()
    killed.wait(10)
    assert os.listdir(tmp_path) == [folder]  # kill -9: nothing could remove it
    app = _app(tmp_path, "stop")
    assert app.wait(60) == 0
    assert os.listdir(tmp_path) == []


def test_a_killed_apps_folders_go_at_any_start(tmp_path):
    """Any voxcap start removes what killed runs left (the echo canceller's folder among them),
    not only the next echo canceller: the folders of processes still running stay, and so does
    what is not a run's folder."""
    killed = _app(tmp_path, "hang")
    folder = killed.stdout.readline().strip()
    killed.kill()
    killed.wait(10)
    running = tmp_path / f"voxcap-engine-{os.getpid()}-abc123"  # this process's: alive
    other = tmp_path / "voxcap-notes"
    for kept in (running, other):
        kept.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path), "VOXCAP_DATA_DIR": str(tmp_path / "data"),
           "VOXCAP_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "voxcap.cli", "sessions"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == sorted([running.name, other.name, "state"]), folder
