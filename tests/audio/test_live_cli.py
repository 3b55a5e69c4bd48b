"""`voxcap live` end to end: the virtual speaker and microphone through capture and the tiny vLLM
model (dummy weights: the text is gibberish, but every 80 ms of audio gives one token)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.slow]


class LiveRun:
    """`voxcap live` as a subprocess, stderr collected line by line as it comes."""

    def __init__(self, args, env):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "voxcap.cli", "live", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def wait_line(self, text, timeout=300):
        deadline = time.monotonic() + timeout
        while not any(text in ln for ln in self.lines):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"no {text!r} in stderr:\n{self.stderr[-3000:]}")
            time.sleep(0.1)

    def finish(self, timeout=300):
        out, _ = self.proc.communicate(timeout=timeout)
        self._reader.join(5)
        return self.proc.returncode, out


def _env(pulse, tmp_path):
    env = pulse.env()
    env.update(VOXCAP_DATA_DIR=str(tmp_path / "data"), OMP_NUM_THREADS="1")
    return env


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_live_both_sources_for_a_duration(pulse, tiny_model_dir, tmp_path, speech_them, speech_you):
    out = tmp_path / "live.jsonl"
    run = LiveRun(["--source", "both", "--model", str(tiny_model_dir), "--dummy-weights", "--eager",
                   "--max-model-len", "2048", "--duration", "8", "-o", str(out)], _env(pulse, tmp_path))
    run.wait_line("live: captioning for 8 s")
    p1 = pulse.play(speech_them[0], sink="vspeaker", wait=False)
    p2 = pulse.play(speech_you[0], sink="micfeed", wait=False)
    rc, stdout = run.finish()
    p1.wait(30), p2.wait(30)
    err = run.stderr
    assert rc == 0, err[-3000:]
    assert "capture: Them: capturing 'Monitor of Virtual Speaker'" in err
    assert "capture: You: capturing 'Virtual Microphone'" in err
    assert "live: 8 s done: flushing" in err and "live: done" in err
    for label in ("Them", "You"):  # nothing lost on the way
        stopped = next(ln for ln in run.lines if ln.startswith(f"capture: {label}: stopped after"))
        assert "0 blocks dropped, 0 overflows, 0.00 s of gaps, 0 interruptions" in stopped
    assert "Traceback" not in err
    records = _records(out)
    by_label = {lab: [r for r in records if r["label"] == lab] for lab in ("Them", "You")}
    for label, recs in by_label.items():
        # 8 s of audio, 12.5 tokens a second (the flush adds the model's delay on top)
        assert 90 <= len(recs) <= 120, (label, len(recs))
        assert 7.5 <= recs[-1]["end"] <= 8.5, (label, recs[-1]["end"])
    assert "[Them]" in stdout and "[You]" in stdout  # captions printed as they came


def test_live_survives_a_server_restart_and_flushes_on_ctrl_c(pulse, tiny_model_dir, tmp_path):
    out = tmp_path / "live.jsonl"
    run = LiveRun(["--source", "system", "--model", str(tiny_model_dir), "--dummy-weights", "--eager",
                   "--max-model-len", "2048", "-o", str(out)], _env(pulse, tmp_path))
    run.wait_line("live: captioning (Ctrl-C to stop)")
    time.sleep(2.0)
    pulse.kill()
    run.wait_line("capture: Them: audio stopped (the sound server went away): reconnecting", 10)
    time.sleep(1.0)
    pulse.restart()
    run.wait_line("capture: Them: capturing again from 'Monitor of Virtual Speaker'", 10)
    time.sleep(2.0)
    run.proc.send_signal(signal.SIGINT)  # Ctrl-C: flush, write the transcript, exit cleanly
    rc, _ = run.finish()
    err = run.stderr
    assert rc == 0, err[-3000:]
    assert "live: interrupted (Ctrl-C again to abort): flushing" in err and "live: done" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    records = _records(out)
    # one caption stream across the outage: ~2 s before + ~2 s after (the outage itself is not
    # padded), one stream id, steps numbered without a break
    assert len({r["stream"] for r in records}) == 1
    assert [r["index"] for r in records] == list(range(len(records)))
    assert records[-1]["end"] >= 3.5
