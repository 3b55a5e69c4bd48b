"""voxcap's log (voxcap.logs): the file, the levels every command takes, tracebacks of caught
exceptions, and no caption text."""

from __future__ import annotations

import logging
import logging.handlers
import os
import subprocess
import sys

import pytest

from voxcap import logs
from voxcap.eventhub import EventHub


def run_voxcap(*args, env):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def test_every_command_logs_to_the_file_and_v_reaches_the_terminal(tmp_path):
    env = {"VOXCAP_STATE_DIR": str(tmp_path / "state"), "VOXCAP_DATA_DIR": str(tmp_path / "d")}
    quiet = run_voxcap("sessions", env=env)
    assert quiet.returncode == 0 and "INFO" not in quiet.stderr
    log_file = tmp_path / "state" / "voxcap.log"
    assert "voxcap.commands: voxcap 0.1.0: sessions" in log_file.read_text().replace(
        logs.__name__, "")  # the file has the run even without -v
    loud = run_voxcap("sessions", "-v", env=env)
    assert "INFO voxcap.commands: voxcap" in loud.stderr
    debug = run_voxcap("make-tiny-model", str(tmp_path / "m"), "--log-level", "debug", env=env)
    assert debug.returncode == 0 and "INFO voxcap.commands" in debug.stderr
    bad = run_voxcap("export", "nope", "-o", str(tmp_path / "x.srt"), env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr  # one line and the fix
    text = log_file.read_text()
    assert "voxcap export: No session" in text and "Traceback" in text  # the log keeps where


def test_the_file_rotates_and_tail_reads_its_end(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_STATE_DIR", str(tmp_path))
    path = logs.setup(None, file=True)
    try:
        handler = next(h for h in logging.getLogger("voxcap").handlers
                       if isinstance(h, logging.handlers.RotatingFileHandler))
        assert path == tmp_path / "voxcap.log" and handler.backupCount == logs.BACKUPS
        assert handler.maxBytes == logs.MAX_BYTES
        for i in range(5):
            logging.getLogger("voxcap.test").info("line %d", i)
        assert logs.tail(2).splitlines()[-1].endswith("line 4")
        assert len(logs.tail(2).splitlines()) == 2
    finally:
        logs.setup(None, file=False)


def test_a_caught_exception_is_logged_with_its_traceback(caplog):
    hub = EventHub()

    def broken(event):
        raise ValueError("consumer bug")

    hub.subscribe(broken)
    got = hub.subscribe()
    with caplog.at_level(logging.INFO, logger="voxcap"):
        logging.getLogger("voxcap").propagate = True
        try:
            hub.publish("event")
        finally:
            logging.getLogger("voxcap").propagate = False
    assert got.get_nowait() == "event"  # the others still got it
    recs = [r for r in caplog.records if r.name == "voxcap.eventhub"]
    assert recs and all(r.exc_info and "consumer bug" in str(r.exc_info[1]) for r in recs)


@pytest.mark.parametrize("allowed", [False, True])
def test_websocket_frames_carry_text_only_when_asked(monkeypatch, allowed):
    """websockets logs every frame (audio, captions) at DEBUG: dropped unless VOXCAP_LOG_TEXT=1."""
    from voxcap.engine.remote.connection import ws_logger

    if allowed:
        monkeypatch.setenv("VOXCAP_LOG_TEXT", "1")
    record = ws_logger.makeRecord(ws_logger.name, logging.DEBUG, __file__, 1, "< %s",
                                   ("TEXT '{\"type\": \"transcription.delta\", \"delta\": "
                                    "\"secret words\"}'",), None)
    assert ws_logger.filter(record) is allowed
    assert logs.caption_text("secret words") == ("'secret words'" if allowed else "<12 chars>")


def test_v_reaches_the_engine(tiny_model_dir):
    """-v / --log-level info show vLLM's own log: the engine is built verbose (not started)."""
    import shutil

    from voxcap.commands import build_parser
    from voxcap.commands.options import make_engine

    parser, _ = build_parser()
    for argv, verbose in ((["-v"], True), ([], False), (["--log-level", "info"], True)):
        args = parser.parse_args(["transcribe", "a.wav", "--model", str(tiny_model_dir), *argv])
        engine = make_engine(args)
        try:
            assert engine.inner._verbose is verbose
        finally:
            engine.shutdown()
            shutil.rmtree(engine.inner._workdir, ignore_errors=True)


@pytest.mark.parametrize("level,shown,traceback", [(None, False, False),
                                                   (logging.INFO, True, False),
                                                   (logging.DEBUG, True, True)])
def test_terminal_shows_records_only_when_asked_and_tracebacks_at_debug(
        tmp_path, monkeypatch, capsys, level, shown, traceback):
    monkeypatch.setenv("VOXCAP_STATE_DIR", str(tmp_path))
    logs.setup(level)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("voxcap.test").warning("it failed", exc_info=True)
    finally:
        logs.setup(None, file=False)
    err = capsys.readouterr().err
    assert ("WARNING voxcap.test: it failed" in err) is shown
    assert ("Traceback" in err) is traceback
    assert "Traceback" in (tmp_path / "voxcap.log").read_text()  # the file always has it


LIBRARY_CHILD = r"""
import subprocess, sys, warnings
from voxcap import logs
logs.setup(None)
with logs.library_output_to_log() as path:
    # what vLLM's processes started meanwhile write, and C code / Python warnings here
    subprocess.run(["sh", "-c", "echo 'NUMA binding: child noise' >&2"], check=True)
    print("python noise", file=sys.stderr, flush=True)
    print("voxcap: my own line", file=logs.terminal(), flush=True)
warnings.warn("a library's FutureWarning", FutureWarning)
print("after: back on stderr", file=sys.stderr, flush=True)
print(path)
"""


def test_library_output_goes_to_the_library_log_and_voxcaps_lines_to_the_terminal(tmp_path):
    env = {**os.environ, "VOXCAP_STATE_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", LIBRARY_CHILD], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / logs.LIBRARY_LOG_NAME)
    assert r.stderr == "voxcap: my own line\nafter: back on stderr\n"  # and no warning
    noise = (tmp_path / logs.LIBRARY_LOG_NAME).read_text()
    assert "NUMA binding: child noise" in noise and "python noise" in noise
    assert "a library's FutureWarning" in (tmp_path / logs.LOG_NAME).read_text()
    # -v (enabled=False): nothing is redirected
    r = subprocess.run([sys.executable, "-c", LIBRARY_CHILD.replace(
        "library_output_to_log()", "library_output_to_log(enabled=False)")], capture_output=True,
        text=True, timeout=60, env=env)
    assert "NUMA binding: child noise" in r.stderr and r.stdout.strip() == "None"


def _mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_logs_are_readable_by_their_owner_only(tmp_path, monkeypatch):
    """voxcap.log (and its rotations), vllm.log and vllm-server.log: 0600 in a 0700 folder under
    the usual umask 022, and an existing file or folder others could read is fixed on start."""
    from voxcap.engine.server.process import ServerProcess

    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    old = {}
    for name in (logs.LOG_NAME, logs.LOG_NAME + ".1", logs.LIBRARY_LOG_NAME, "vllm-server.log"):
        old[name] = state / name
        old[name].write_text("from before\n")
        old[name].chmod(0o644)
    saved_umask = os.umask(0o022)
    try:
        env = {"VOXCAP_STATE_DIR": str(state)}
        r = subprocess.run([sys.executable, "-c", LIBRARY_CHILD], capture_output=True, text=True,
                           timeout=60, env={**os.environ, **env})
        assert r.returncode == 0, r.stderr
        assert _mode(state) == 0o700
        assert {n: _mode(p) for n, p in old.items() if n != "vllm-server.log"} == {
            logs.LOG_NAME: 0o600, logs.LOG_NAME + ".1": 0o600, logs.LIBRARY_LOG_NAME: 0o600}
        monkeypatch.setenv("VOXCAP_STATE_DIR", str(state))
        monkeypatch.setattr(logs, "MAX_BYTES", 300)
        (state / logs.LOG_NAME).unlink()
        logs.setup(None, file=True)
        try:
            for i in range(40):  # several rotations: each new file is made here
                logging.getLogger("voxcap.test").info("line %d %s", i, "x" * 40)
        finally:
            logs.setup(None, file=False)
        assert (state / (logs.LOG_NAME + ".3")).exists()
        assert {_mode(p) for p in state.glob(logs.LOG_NAME + "*")} == {0o600}
        server = ServerProcess([sys.executable, "-c", "print('up')"], dict(os.environ),
                               state / "vllm-server.log").start()
        assert server.wait() == 0
        assert _mode(state / "vllm-server.log") == 0o600
        assert "up" in (state / "vllm-server.log").read_text()
    finally:
        os.umask(saved_umask)
