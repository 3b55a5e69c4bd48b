"""The in-process engine's temporary folder (<tmp>/voxcap-engine-<pid>-*: its stage file, the
logging config and the stderr of vLLM's processes) is gone after the app quits, also when the
engine did not stop in time, and a folder left by a killed app is removed by the next engine.
Each app is a process of its own with its own temporary folder (TMPDIR)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ENGINE = """
import os, sys, time
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.settings import InProcessSettings
engine = LocalEngine(InProcessSettings(sys.argv[1], dummy_weights=True, enforce_eager=True))
print(engine._workdir, flush=True)
if sys.argv[2] == "quit-while-starting":  # what the app does at quit: 3 s at most, then leaves
    engine.start()
    engine.shutdown(timeout=0.01)
    print("after shutdown:", engine._workdir.exists(), flush=True)
    os._exit(0)
if sys.argv[2] == "hang":
    time.sleep(600)
if sys.argv[2] == "start-stop":  # a whole start and a clean stop
    engine.start().wait_ready(timeout=300)
    print("sockets while running:", sorted(p.name for p in engine._workdir.iterdir()
                                           if p.is_socket()), flush=True)
    engine.shutdown()
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


@pytest.fixture
def short_tmp():
    """A temporary folder with a short path, as /tmp is (a socket's path has at most 107 bytes:
    under pytest's long tmp_path vLLM's sockets stay where vLLM puts them)."""
    folder = Path(tempfile.mkdtemp(prefix="vx-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.engine
def test_vllms_sockets_stay_in_the_engines_folder(short_tmp, tiny_model_dir):
    """vLLM's ZeroMQ sockets (files named by a uuid4) go in the engine's folder, removed with it,
    not in the temporary one, where a clean stop left them for good (seen: 3 a start)."""
    app = _app(short_tmp, tiny_model_dir, "start-stop")
    out, _ = app.communicate(timeout=400)
    assert app.returncode == 0, out
    assert re.search(r"sockets while running: \['[0-9a-f-]{36}'", out), out
    left = [p.name for p in short_tmp.iterdir() if re.fullmatch(r"[0-9a-f-]{36}", p.name)]
    assert left == [], left
    assert _left(short_tmp) == []


def test_a_long_temporary_path_leaves_the_sockets_where_vllm_puts_them(tmp_path):
    from voxcap.engine.vllm_adapter.env import RPC_BASE_ENV, rpc_env

    assert rpc_env(Path("/tmp/voxcap-engine-12345-abcdefgh")) == {
        RPC_BASE_ENV: "/tmp/voxcap-engine-12345-abcdefgh"}
    assert rpc_env(tmp_path / ("x" * 80)) == {}  # beyond a socket path's 107 bytes
