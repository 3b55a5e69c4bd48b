"""``voxcap serve`` prints vLLM's start-up stages while its server starts, from vLLM's
own log records as the app shows them: the records of a stand-in process configured by the very
logging config the server gets (vLLM's messages for each stage), and the real CPU server with the
tiny model's weight files."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from support.vllm_server import VllmServer

from voxcap.engine.server.stages import IMPORTING, WORKDIR_PREFIX, ServerStages, new_workdir

# vLLM 0.32's messages at each stage, logged as its processes log them
EMITTER = """
import logging.config, json, os, sys, time
logging.config.dictConfig(json.load(open(os.environ["VLLM_LOGGING_CONFIG_PATH"])))
log = logging.getLogger("vllm.model_executor.model_loader")
for message in sys.argv[1:]:
    time.sleep(0.6)
    log.info(message)
"""
MESSAGES = ["Starting to load model /models/tiny...",
            "Compiling a graph for compile range (1, 256) takes 41.2 s",
            "Capturing CUDA graphs (decode, FULL): 100%"]


class Lines(io.StringIO):
    """What was printed, with the time each line came."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.at += [(time.monotonic(), line) for line in text.splitlines()]
        return super().write(text)


def test_each_stage_is_printed_when_it_is_reached(tmp_path):
    out = Lines()
    stages = ServerStages(tmp_path, out, still_every_s=1.0, interval_s=0.05)
    env = stages.env()
    stages.start()
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", EMITTER, *MESSAGES], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    time.sleep(1.3)  # the last stage lasts: said to be still going
    stages.ready()
    printed = [line.split("s  ", 1)[1] for _, line in out.at]
    assert printed[0] == f"{IMPORTING}…"
    reached = [p for p in printed if not p.startswith("still ")]
    assert reached == [f"{IMPORTING}…", "loading weights…", "compiling…", "capturing graphs…",
                       "ready"], printed
    assert "still capturing graphs…" in printed
    # as they came, not at the end: the emitter wrote one every 0.6 s
    times = {line.split("s  ", 1)[1]: t - t0 for t, line in out.at}
    assert 0.3 < times["loading weights…"] < times["compiling…"] - 0.3 \
        < times["capturing graphs…"] - 0.6, times
    # vLLM's lines stay in the server's log, with the process and place they came from
    assert re.search(r"^\(pid=\d+\) INFO \d\d-\d\d [\d:]+ \[<string>:\d+\] Starting to load model",
                     proc.stderr, re.M), proc.stderr


@pytest.mark.engine
@pytest.mark.timeout(900)
def test_serve_prints_the_stages_of_the_real_server(tiny_weights_dir, tmp_path):
    """The CPU build's server with the tiny model's weight files (--eager, as the remote tests):
    importing, loading weights, allocating the cache, ready, each with the seconds since the
    start, and each printed before the server answered."""
    server = VllmServer(tiny_weights_dir, max_model_len=512, log_path=tmp_path / "serve.out")
    printed: list[tuple[float, str]] = []
    seen = threading.Event()

    def watch():  # the terminal's lines as they come, with when they came
        count, last = 0, False
        while not last:
            last = seen.is_set()  # one more read after the start: its last lines
            lines = server.output().splitlines()
            printed.extend((time.monotonic(), line) for line in lines[count:])
            count = len(lines)
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        server.start()
    finally:
        seen.set()
        watcher.join(5)
        server.stop()
    out = server.output()
    stage_lines = re.findall(r"^ +(\d+) s  (.+)$", out, re.M)
    stages = [stage for _, stage in stage_lines]
    assert stages[0] == f"{IMPORTING}…" and stages[-1] == "ready", out
    assert "loading weights…" in stages and "allocating cache…" in stages, out
    seconds = [int(s) for s, _ in stage_lines]
    assert seconds == sorted(seconds) and seconds[-1] > seconds[0], out
    assert out.index("  ready\n") < out.index("Ready: ws://"), out
    # printed while the server started, not after: loading weights came seconds before ready
    when = {line.split("s  ", 1)[1]: t for t, line in printed if re.match(r"^ +\d+ s  ", line)}
    assert when["ready"] - when["loading weights…"] >= 0.5, when
    print(f"\nvoxcap serve's stages:\n{chr(10).join(f'{s:>4} s  {n}' for s, n in stage_lines)}")


def test_a_quieter_vllm_log_keeps_the_stages(tmp_path, monkeypatch):
    """VLLM_LOGGING_LEVEL=WARNING quiets the server's log, as vLLM's own config does; the stages
    still come."""
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "WARNING")
    out = Lines()
    stages = ServerStages(tmp_path, out, interval_s=0.05)
    stages.start()
    proc = subprocess.run([sys.executable, "-c", EMITTER, MESSAGES[0]], env=stages.env(),
                          capture_output=True, text=True, timeout=60)
    stages.ready()
    assert "Starting to load model" not in proc.stderr, proc.stderr
    assert [line.split("s  ", 1)[1] for _, line in out.at] == [
        f"{IMPORTING}…", "loading weights…", "ready"]


def test_a_killed_serves_working_folder_goes_at_the_next_start(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    killed = tmp_path / f"{WORKDIR_PREFIX}{gone}-abc"  # its serve was killed: pid gone
    running = tmp_path / f"{WORKDIR_PREFIX}{os.getppid()}-def"  # a serve still running
    for folder in (killed, running):
        folder.mkdir()
        (folder / "stages.jsonl").write_text("")
    other = tmp_path / "voxcap-serve-dirs-xyz"  # not serve's: a test helper's
    other.mkdir()
    new = new_workdir()
    assert not killed.exists() and running.exists() and other.exists()
    assert new.parent == tmp_path and new.name.startswith(f"{WORKDIR_PREFIX}{os.getpid()}-")
