"""Every process vLLM starts for voxcap dies with the app, however the app dies: `kill -9` of
`voxcap transcribe` and the GUI leaves nothing running within 5 s (`voxcap live`:
tests/commands/test_live.py)."""

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
from voxcap.engine.vllm_adapter import cpu_processes as vllm_cpu_processes
from voxcap.engine.vllm_adapter import patches as vllm_patches

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
def test_kill9_of_transcribe_leaves_no_engine(tiny_weights_dir, tmp_path):
    wav = tmp_path / "speech.wav"
    sf.write(wav, speech_like(30.0, seed=5), 16000)
    app = App(["transcribe", str(wav), "--model", str(tiny_weights_dir), "--eager",
               "--realtime", "-o", str(tmp_path / "out.srt")])
    kids = app.wait(lambda text, kids: "engine: ready" in text)
    time.sleep(1.0)  # streaming
    app.kill9_and_check_children_die(kids)


@pytest.mark.engine
@pytest.mark.slow
def test_kill9_of_the_gui_while_its_engine_starts_leaves_no_engine(tiny_weights_dir, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", VOXCAP_CONFIG_DIR=str(tmp_path / "config"),
               VOXCAP_DATA_DIR=str(tmp_path / "data"), OMP_NUM_THREADS="1")
    app = App(["gui", "--model", str(tiny_weights_dir), "--eager"], env)
    kids = app.wait(lambda text, kids: engine_core_among(kids))  # mid start: the state a user quits in most
    app.kill9_and_check_children_die(kids)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(30)
    return p.pid


def test_a_vllm_child_whose_parent_is_gone_exits_at_once():
    """The race the plugin closes: the app dies between spawning a child and its prctl (the
    child finds itself re-parented); a vLLM that merely inherited the variables (its parent is
    not the voxcap app, which is alive) is left alone."""
    code = ("import os, sys; from voxcap.engine.vllm_adapter.plugin import detach_from_terminal; "
            "detach_from_terminal(); print('alive')")
    for app_pid, alive in ((_dead_pid(), False), (1, True)):
        env = dict(os.environ, VOXCAP_APP_PID=str(app_pid))
        env.pop("VOXCAP_VLLM_PARENT_PID", None)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=60)
        assert ("alive" in r.stdout) is alive and r.returncode == (0 if alive else 1), (app_pid, r)
    # its own parent: tied to it, and alive
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, VOXCAP_APP_PID=str(os.getpid())))
    assert r.returncode == 0 and "alive" in r.stdout, r.stderr


def _spawn_and_kill_parent(tmp_path, env, method="spawn", setup="") -> psutil.Process:
    """A parent that starts a child the way vLLM does (multiprocessing, ``method``) after running
    ``setup``; the parent is SIGKILLed while the child sleeps; returns the child."""
    pidfile = tmp_path / "child.pid"
    parent_py = tmp_path / "parent.py"
    parent_py.write_text(
        "import multiprocessing as mp, os, sys, time\n"
        "def child(path):\n"
        "    open(path, 'w').write(str(os.getpid()))\n"
        "    time.sleep(120)\n"
        "if __name__ == '__main__':\n"
        "    os.environ['VOXCAP_APP_PID'] = str(os.getpid())\n"
        f"    {setup or 'pass'}\n"
        f"    mp.get_context({method!r}).Process(target=child, args=(sys.argv[1],)).start()\n"
        "    time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, str(parent_py), str(pidfile)], env=env,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (pidfile.exists() and pidfile.read_text()):
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.1)
        child = psutil.Process(int(pidfile.read_text()))
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        return child
    except BaseException:
        os.killpg(parent.pid, signal.SIGKILL)
        raise


def _hooked_dies_bare_survives(tmp_path, hooked_env, bare_env, method="spawn", setup="") -> None:
    """The child of a SIGKILLed parent dies within 5 s when tied to it (``hooked_env``,
    ``setup``), and outlives it without (checked too, so the test can fail)."""
    for d in ("hooked", "bare"):
        (tmp_path / d).mkdir()
    child = _spawn_and_kill_parent(tmp_path / "hooked", hooked_env, method, setup)
    child.wait(5)  # raises TimeoutExpired if it outlives its parent
    bare = _spawn_and_kill_parent(tmp_path / "bare", bare_env, method)
    try:
        with pytest.raises(psutil.TimeoutExpired):
            bare.wait(2)
    finally:
        try:
            bare.kill()
        except psutil.NoSuchProcess:
            pass


def _env_without_voxcap() -> dict:
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VOXCAP_APP_PID", "VOXCAP_VLLM_PARENT_PID")}


def test_a_spawned_child_dies_with_its_parent_before_vllm_is_even_imported(tmp_path):
    """The early hook (engine/vllm_adapter/early_hook/sitecustomize.py, on the PYTHONPATH the engine gives
    vLLM's children) ties a spawned child to its parent at interpreter start."""
    from voxcap.engine.vllm_adapter.plugin import EARLY_HOOK_DIR

    bare_env = _env_without_voxcap()
    _hooked_dies_bare_survives(tmp_path, dict(bare_env, PYTHONPATH=str(EARLY_HOOK_DIR)), bare_env)


def test_a_forked_engine_core_dies_with_the_app(tmp_path):
    """vLLM forks its engine core from the app (engine/inprocess/engine.py); the at-fork hook the engine
    registers (tie_forked_children) ties the child to the app at once, since a forked child
    runs neither the early hook nor the plugin."""
    env = _env_without_voxcap()
    _hooked_dies_bare_survives(
        tmp_path, env, env, "fork",
        "from voxcap.engine.vllm_adapter.plugin import tie_forked_children; tie_forked_children()")


def test_a_forked_engine_core_of_voxcap_serves_server_dies_with_it(tmp_path):
    """`voxcap serve`'s vLLM server is the "app" (VOXCAP_APP_PID is its own pid) and calls no
    tie_forked_children itself: the plugin's call in it (vLLM loads plugins when it builds its
    engine arguments, before forking its engine core on a GPU) registers the at-fork hook."""
    env = _env_without_voxcap()
    if os.environ.get("PYTHONPATH"):  # the voxcap under test (a fork runs no early hook)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    _hooked_dies_bare_survives(
        tmp_path, env, env, "fork",
        "from voxcap.engine.vllm_adapter.plugin import detach_from_terminal; detach_from_terminal()")


def test_sigkill_reaches_a_vllm_child_when_its_parent_dies(tmp_path):
    """PR_SET_PDEATHSIG through the plugin: a grandchild that set it dies with its parent."""
    pidfile = tmp_path / "child.pid"
    child_py = tmp_path / "child.py"
    child_py.write_text("import os, sys, time\n"
                        "from voxcap.engine.vllm_adapter.plugin import die_with_parent\n"
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


@pytest.mark.engine
def test_the_engine_core_leaves_the_apps_process_group(engine):
    """voxcap asks vLLM to fork its engine core (no second import of torch and vLLM), and to run
    the worker inside it, as on one GPU: on vLLM's CPU build too, since the tests' torch runs one
    OpenMP thread (engine/vllm_adapter/cpu_processes.py; the engine records what vLLM used). The core
    left the app's process group (a Ctrl-C meant for the app must not reach it), is the app's
    child, and has no worker process of its own."""
    assert engine.vllm_env["VLLM_WORKER_MULTIPROC_METHOD"] == "fork"
    assert engine.start_method == "fork"
    pids = engine.engine_pids()
    assert len(pids) == 1
    for pid in pids:
        core = psutil.Process(pid)
        assert core.ppid() == os.getpid()
        assert os.getpgid(pid) == pid != os.getpgid(0)
        workers = [c for c in core.children(recursive=True) if "python" in c.name().lower()
                   or c.name().startswith("VLLM")]
        assert workers == [], [(c.pid, c.name(), c.cmdline()[:3]) for c in workers]


@pytest.mark.engine
def test_local_engine_runs_vllm_with_the_session_fix_on(engine):
    """voxcap's engine switches the fix on in the environment its vLLM processes are spawned
    with (VOXCAP_VLLM_SESSION_FIX=0 turns it off); the plugin then applies it there
    (tests/engine/vllm_adapter/test_vllm_patches.py). The children's own /proc environ is overwritten by
    vLLM's process titles; the app's own environment is put back once they run (nothing else
    it starts inherits the switch)."""
    assert engine.is_ready and engine.engine_pids()
    assert engine.vllm_env[vllm_patches.SESSION_FIX_ENV] == "1"
    # and the token carry: chunks go ahead of their tokens in every engine test's streams
    assert engine.vllm_env[vllm_patches.TOKEN_CARRY_ENV] == "1" and engine.token_carry
    # and, on vLLM's CPU build, its processes as on one GPU (the process test above)
    assert engine.vllm_env[vllm_cpu_processes.CPU_AS_GPU_ENV] == "1"
    assert "VOXCAP_APP_PID" not in os.environ and "VOXCAP_STAGE_FILE" not in os.environ


FORK_WHILE_READING_STDIN = """
import multiprocessing as mp, os, sys, threading, time
def child(path):
    open(path, 'w').write('started')
if __name__ == '__main__':
    os.environ['VOXCAP_APP_PID'] = str(os.getpid())
    if sys.argv[2] == 'tied':
        from voxcap.engine.vllm_adapter.plugin import tie_forked_children
        tie_forked_children()
    threading.Thread(target=lambda: sys.stdin.readline(), daemon=True).start()
    time.sleep(0.5)  # the reader is blocked in sys.stdin, holding its lock
    p = mp.get_context('fork').Process(target=child, args=(sys.argv[1],))
    p.start()
    p.join(60 if sys.argv[2] == 'tied' else 8)  # tied: a loaded machine (seen: 8 s too short)
    print('alive' if p.is_alive() else 'ended', flush=True)
    if p.is_alive():
        p.kill()
"""


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "bare"])
def test_a_forked_engine_core_starts_while_the_app_reads_stdin(tmp_path, tied):
    """multiprocessing's start-up closes sys.stdin in the forked child; a thread of the app
    blocked reading it holds its lock, so the child would wait for ever (seen: the test app's
    engine core, which reads its commands from stdin). A child forked while a voxcap engine
    runs gets a stdin of its own and starts (and without the hook it hangs: checked too)."""
    script, marker = tmp_path / "app.py", tmp_path / "started"
    script.write_text(FORK_WHILE_READING_STDIN)
    env = _env_without_voxcap() | ({"PYTHONPATH": os.environ["PYTHONPATH"]}
                                   if os.environ.get("PYTHONPATH") else {})
    app = subprocess.Popen([sys.executable, str(script), str(marker), "tied" if tied else "bare"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:  # stdin stays open (nothing written): the app's reader stays blocked in it
        out = app.stdout.readline()
        app.wait(90)
    finally:
        app.kill()
        app.stdin.close()
    if tied:
        assert out.strip() == "ended" and marker.read_text() == "started", out
    else:
        assert out.strip() == "alive" and not marker.exists(), out
