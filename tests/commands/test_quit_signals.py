"""SIGTERM (a logout, `kill`) and SIGHUP (the terminal window closed) stop `voxcap transcribe` and
`voxcap live` as Ctrl-C does: the last words flushed, the journal closed; a second one leaves at
once (voxcap/quit_signals.py). With SIGHUP the terminal is gone and every write to it fails: the
lines go to the log, with no traceback and no hang.

`voxcap transcribe --realtime` in a process of its own on a pseudo-terminal, its engine the GUI
tests' scripted one (the real engine's: test_live.py); the shared handlers in a bare process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support.on_terminal import OnTerminal

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIBE = """
import sys
from support.gui_fakes import ScriptedEngine
from voxcap.commands import main, terminal_frontend
terminal_frontend.make_engine = lambda args, on_event=None, settings=None, **kw: ScriptedEngine(
    settings, on_event, flush_s=0.5)
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def transcribe(tmp_path):
    """`voxcap transcribe --realtime` of a 60 s file, its folders under ``tmp_path``."""
    import soundfile as sf

    from voxcap.commands.bench import speech_like

    wav = tmp_path / "long.wav"
    sf.write(wav, speech_like(60.0, seed=3), 16000)
    (tmp_path / "model").mkdir()
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "VOXCAP_DATA_DIR": str(tmp_path / "data"), "TMPDIR": str(tmp_path / "tmp"),
           "VOXCAP_STATE_DIR": str(tmp_path / "state"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    args = ["transcribe", str(wav), "--model", str(tmp_path / "model"), "--dummy-weights",
            "--realtime", "-o", str(tmp_path / "out.jsonl")]
    runs: list[OnTerminal] = []
    yield lambda: runs.append(OnTerminal([sys.executable, "-c", TRANSCRIBE, *args], env)) or runs[-1]
    for run in runs:
        run.kill()


def _ended_in(seconds: float, proc: subprocess.Popen) -> int:
    t0 = time.monotonic()
    code = proc.wait(30)
    took = time.monotonic() - t0
    assert took < seconds, f"{took:.1f} s from the signal to the end"
    return code


def _journal_closed(data: Path) -> None:
    """The session ended as a stopped one does: its streams' ends recorded, the session closed."""
    from voxcap.captions.sessions import read_session_dir

    (folder,) = (data / "sessions").iterdir()
    session = read_session_dir(folder)
    assert session.info.state == "finished" and session.stream_lengths, session.info


def test_sigterm_stops_as_ctrl_c_does(transcribe, tmp_path):
    run = transcribe()
    run.wait_for("transcribe: captioning")
    time.sleep(1.0)
    os.killpg(run.proc.pid, signal.SIGTERM)  # as a logout does
    assert _ended_in(5.0, run.proc) == 0, run.text[-3000:]
    time.sleep(0.2)  # the last of it read
    assert "transcribe: SIGTERM received (SIGTERM again to leave at once): flushing" in run.text
    assert "transcribe: done" in run.text and "Traceback" not in run.text, run.text[-3000:]
    records = [json.loads(ln) for ln in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert records and records[-1]["end"] < 30.0  # stopped early, written anyway
    _journal_closed(tmp_path / "data")
    assert os.listdir(tmp_path / "tmp") == []


def test_sighup_with_the_terminal_gone_logs_instead(transcribe, tmp_path):
    run = transcribe()
    run.wait_for("transcribe: captioning")
    time.sleep(1.0)
    run.hang_up()  # every write to the terminal now fails (EIO)
    os.killpg(run.proc.pid, signal.SIGHUP)
    assert _ended_in(5.0, run.proc) == 0
    log = (tmp_path / "state" / "voxcap.log").read_text()
    assert "SIGHUP received: stopping" in log, log[-3000:]
    assert "the terminal is gone" in log and "transcribe: done" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    _journal_closed(tmp_path / "data")


SHARED = """
import os, sys, time
from voxcap import paths
from voxcap.quit_signals import QuitSignals
folder = paths.run_tempdir("voxcap-test-")
with QuitSignals() as quit:
    child = os.fork()  # as vLLM forks its engine core from the app
    if child == 0:
        print(os.getpid(), flush=True)  # its at-fork hooks have run
        time.sleep(60)
        os._exit(0)
    while not quit.received:
        time.sleep(0.01)
    print(quit.received, flush=True)
    time.sleep(60)  # stopping in order, taking its time
"""


def test_a_second_signal_leaves_at_once(tmp_path):
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen([sys.executable, "-c", SHARED], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path / "tmp")}, cwd=ROOT)
    try:
        child = int(proc.stdout.readline())
        os.kill(child, signal.SIGHUP)  # the app's handlers are not the child's: it dies of it
        deadline = time.monotonic() + 5
        while psutil.Process(child).status() != psutil.STATUS_ZOMBIE:  # its parent reaps it not
            assert time.monotonic() < deadline, "the forked child outlived its SIGHUP"
            time.sleep(0.05)
        proc.send_signal(signal.SIGHUP)
        assert proc.stdout.readline() == "SIGHUP\n"
        proc.send_signal(signal.SIGTERM)
        assert _ended_in(2.0, proc) == 128 + signal.SIGTERM
        assert os.listdir(tmp_path / "tmp") == []  # its temporary folder removed
    finally:
        proc.kill()
