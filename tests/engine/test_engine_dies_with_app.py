"""Every process vLLM starts for voxcap dies with the app, however the app dies: `kill -9` of
`voxcap transcribe` and the GUI leaves nothing running within 5 s (`voxcap live`:
tests/audio/test_live_cli.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest
import soundfile as sf
from support.engine_helpers import engine_core_among, kill9_and_check_children_die

from voxcap.commands.bench import speech_like

START_S = 600  # an engine start on a loaded 2-core machine


class App:
    """A voxcap command in its own session; stderr collected as it comes."""

    def __init__(self, args, env=None):
        self.proc = subprocess.Popen([sys.executable, "-m", "voxcap.cli", *args], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True).start()

    def wait(self, ready) -> list[psutil.Process]:
        """Wait until ``ready(lines, descendants)``; return the app's descendants then."""
        deadline = time.monotonic() + START_S
        me = psutil.Process(self.proc.pid)
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "".join(self.lines)[-3000:]
            kids = me.children(recursive=True)
            if ready("".join(self.lines), kids):
                return kids
            time.sleep(0.2)
        raise AssertionError("".join(self.lines)[-3000:])

    def kill9_and_check_children_die(self, kids) -> None:
        kill9_and_check_children_die(self.proc, kids)


@pytest.mark.engine
@pytest.mark.slow
def test_kill9_of_transcribe_leaves_no_engine(tiny_model_dir, tmp_path):
    wav = tmp_path / "speech.wav"
    sf.write(wav, speech_like(30.0, seed=5), 16000)
    app = App(["transcribe", str(wav), "--model", str(tiny_model_dir), "--dummy-weights", "--eager",
               "--realtime", "-o", str(tmp_path / "out.srt")])
    kids = app.wait(lambda text, kids: "engine: ready" in text)
    time.sleep(1.0)  # streaming
    app.kill9_and_check_children_die(kids)


@pytest.mark.engine
@pytest.mark.slow
def test_kill9_of_the_gui_while_its_engine_starts_leaves_no_engine(tiny_model_dir, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", VOXCAP_CONFIG_DIR=str(tmp_path / "config"),
               VOXCAP_DATA_DIR=str(tmp_path / "data"), OMP_NUM_THREADS="1")
    app = App(["gui", "--model", str(tiny_model_dir), "--dummy-weights", "--eager"], env)
    kids = app.wait(lambda text, kids: engine_core_among(kids))  # mid start: the state a user quits in most
    app.kill9_and_check_children_die(kids)


def test_a_vllm_child_whose_parent_is_gone_exits_at_once():
    """The race the plugin closes: the app dies between spawning a child and its prctl."""
    code = ("import os, sys; from voxcap.engine.vllm_plugin import die_with_parent; "
            "die_with_parent(os.getppid() + 1 if os.getppid() != 1 else 2); print('alive')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "alive" not in r.stdout, (r.returncode, r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-c", code.replace("os.getppid() + 1 if os.getppid() != 1 else 2",
                                                           "os.getppid()")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "alive" in r.stdout, r.stderr


def test_sigkill_reaches_a_vllm_child_when_its_parent_dies(tmp_path):
    """PR_SET_PDEATHSIG through the plugin: a grandchild that set it dies with its parent."""
    pidfile = tmp_path / "child.pid"
    child_py = tmp_path / "child.py"
    child_py.write_text("import os, sys, time\n"
                        "from voxcap.engine.vllm_plugin import die_with_parent\n"
                        "die_with_parent(os.getppid())\n"
                        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
                        "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(child_py)!r}, {str(pidfile)!r}])\n"
        "time.sleep(120)\n")], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        child = psutil.Process(int(pidfile.read_text()))
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        child.wait(5)  # raises TimeoutExpired if it outlives its parent
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
