"""`voxcap transcribe` and `voxcap bench` from the command line, each with its own engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import soundfile as sf
from support.framing import expected_tokens, indices_follow, tokens_in

from voxcap.commands.bench import speech_like

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def run_cli(*args, timeout=600, env=None):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_transcribe_stereo_44k_file_to_jsonl_and_txt(tiny_weights_dir, stereo_44k_file, tmp_path,
                                                     reference_delays):
    """The path a user's first file takes: the weight files loaded through the model view, a
    44.1 kHz stereo file resampled and averaged, a 240 ms delay; the tokens are vLLM's own for
    the audio as voxcap's reader gives it (the reference was fed that)."""
    path = stereo_44k_file  # 44.1 kHz stereo on disk: the command must resample and average
    out = tmp_path / "talk.jsonl"
    r = run_cli("transcribe", str(path), "--model", str(tiny_weights_dir), "--delay-ms", "240",
                "--eager", "--max-model-len", "2048", "-o", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    n16 = int(4.0 * 16000)
    assert abs(tokens_in(records) - expected_tokens(n16, delay_ms=240)) <= 1  # resampler: +- 1 sample
    assert indices_follow(records)
    assert [t for r_ in records for t in r_["tokens"]] == reference_delays["240"]["file44k"]
    assert records[-1]["end"] == pytest.approx(4.0, abs=0.01)
    text = "".join(r_["text"] for r_ in records)
    assert text.strip() and text.strip() in r.stdout  # printed as it arrived
    assert "engine: ready" in r.stderr and "graph mode NONE" in r.stderr
    assert "Traceback" not in r.stderr


def test_bench_runs_each_mode_in_one_engine_sized_for_the_most_streams(tiny_weights_dir):
    r = run_cli("bench", "--model", str(tiny_weights_dir), "--eager",
                "--max-model-len", "1024", "--modes", "PIECEWISE,FULL_DECODE_ONLY",
                "--streams", "1,2", "--seconds", "2", "--json", timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    results = json.loads(r.stdout)["results"]
    assert [(x["mode"], x["streams"]) for x in results] == [
        ("PIECEWISE", 1), ("PIECEWISE", 2), ("FULL_DECODE_ONLY", 1), ("FULL_DECODE_ONLY", 2)]
    for x in results:
        assert x["resolved_mode"] == "NONE"  # eager on CPU, reported as resolved
        assert x["max_streams"] == 2  # one engine per mode, sized for the largest count
        assert x["tokens"] == x["streams"] * expected_tokens(32000)  # this run's tokens only
        assert x["tokens_per_s"] > 0 and x["step_p50_ms"] > 0 and x["startup_s"] > 0
        assert x["graph_steps"].get("NONE", 0) >= x["tokens"] / x["streams"]
    # one start per mode: both runs of a mode report the same engine start
    assert results[0]["startup_s"] == results[1]["startup_s"]
    assert results[2]["startup_s"] == results[3]["startup_s"]
    assert results[0]["speedup_vs_piecewise"] == results[1]["speedup_vs_piecewise"] == 1.0
    assert results[3]["speedup_vs_piecewise"] == pytest.approx(
        results[3]["tokens_per_s"] / results[1]["tokens_per_s"], rel=1e-2)


def test_ctrl_c_in_a_terminal_flushes_and_exits_cleanly(tiny_weights_dir, tmp_path):
    """A terminal sends SIGINT to the whole process group: vLLM's children must not die of it
    before the app has flushed the stream (they detach through voxcap's vLLM plugin)."""
    import signal
    import time

    path = tmp_path / "long.wav"
    sf.write(path, speech_like(60.0, seed=22), 16000)
    out = tmp_path / "long.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "voxcap.cli", "transcribe", str(path), "--model",
         str(tiny_weights_dir), "--eager", "--max-model-len", "2048", "--realtime", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        line = ""
        # the Ctrl-C comes once the app says it may ("captioning (Ctrl-C to stop)"): on a loaded
        # machine a few seconds can pass between "engine: ready" and that line
        while "(Ctrl-C to stop)" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "transcribe ended before captioning began"
        time.sleep(3.0)  # some captions on the way
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-2000:]
    assert "flushing" in err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert tokens_in(records) > 17  # the stream was flushed: its 17 flush tokens arrived
    assert indices_follow(records)
    assert records[-1]["end"] < 60.0  # stopped early, at the Ctrl-C
