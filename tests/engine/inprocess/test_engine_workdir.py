"""The in-process engine's temporary folder (<tmp>/voxcap-engine-<pid>-*: its stage file, the
logging config and the stderr of vLLM's processes) is gone after the app quits, also when the
engine did not stop in time, and a folder left by a killed app is removed by the next engine.
Each app is a process of its own with its own temporary folder (TMPDIR)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

ENGINE = """
import os, sys, time
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.settings import InProcessSettings
engine = LocalEngine(InProcessSettings(sys.argv[1], dummy_weights=True))
print(engine._workdir, flush=True)
if sys.argv[2] == "quit-while-starting":  # what the app does at quit: 3 s at most, then leaves
    engine.start()
    engine.shutdown(timeout=0.01)
    print("after shutdown:", engine._workdir.exists(), flush=True)
    os._exit(0)
if sys.argv[2] == "hang":
    time.sleep(600)
"""


def _app(tmp_path, model, how: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-c", ENGINE, str(model), how], env=env,
                            stdout=subprocess.PIPE, text=True)


def _left(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("voxcap-engine-*"))


def test_the_engines_folder_goes_at_quit_and_after_a_kill(tmp_path, tiny_model_dir):
    app = _app(tmp_path, tiny_model_dir, "quit")
    assert app.wait(60) == 0
    assert _left(tmp_path) == []

    app = _app(tmp_path, tiny_model_dir, "quit-while-starting")
    assert app.wait(60) == 0
    assert "after shutdown: False" in app.stdout.read()
    assert _left(tmp_path) == []

    killed = _app(tmp_path, tiny_model_dir, "hang")
    folder = killed.stdout.readline().strip()
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    assert _left(tmp_path) == [os.path.basename(folder)]  # kill -9: nothing could remove it
    app = _app(tmp_path, tiny_model_dir, "quit")  # the next start removes it
    assert app.wait(60) == 0
    assert _left(tmp_path) == []
