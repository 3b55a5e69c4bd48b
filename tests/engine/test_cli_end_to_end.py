"""`voxcap transcribe` and `voxcap bench` from the command line, each with its own engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf
from support.framing import expected_tokens

from voxcap.bench import speech_like

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def run_cli(*args, timeout=600, env=None):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_transcribe_stereo_44k_file_to_jsonl_and_txt(tiny_model_dir, tmp_path):
    audio = speech_like(4.0, seed=21)
    # 44.1 kHz stereo on disk: the command must resample and average channels
    t44 = np.interp(np.arange(int(4.0 * 44100)) / 44100, np.arange(audio.size) / 16000, audio)
    path = tmp_path / "talk.flac"
    sf.write(path, np.stack([t44, t44], axis=1), 44100)
    out = tmp_path / "talk.jsonl"
    r = run_cli("transcribe", str(path), "--model", str(tiny_model_dir), "--dummy-weights",
                "--eager", "--max-model-len", "2048", "-o", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    n16 = int(4.0 * 16000)
    assert abs(len(records) - expected_tokens(n16)) <= 1  # resampler length is exact +- 1 sample
    assert [r_["index"] for r_ in records] == list(range(len(records)))
    assert records[-1]["end"] == pytest.approx(4.0, abs=0.01)
    text = "".join(r_["text"] for r_ in records)
    assert text.strip() and text.strip() in r.stdout  # printed as it arrived
    assert "engine: ready" in r.stderr and "graph mode NONE" in r.stderr
    assert "Traceback" not in r.stderr


def test_bench_runs_each_mode_in_a_fresh_engine(tiny_model_dir):
    r = run_cli("bench", "--model", str(tiny_model_dir), "--dummy-weights", "--eager",
                "--max-model-len", "1024", "--modes", "PIECEWISE,FULL_DECODE_ONLY",
                "--streams", "1", "--seconds", "2", "--json", timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    results = json.loads(r.stdout)["results"]
    assert [x["mode"] for x in results] == ["PIECEWISE", "FULL_DECODE_ONLY"]
    for x in results:
        assert x["resolved_mode"] == "NONE"  # eager on CPU, reported as resolved
        assert x["tokens"] == expected_tokens(32000)
        assert x["tokens_per_s"] > 0 and x["step_p50_ms"] > 0 and x["startup_s"] > 0
        assert x["graph_steps"].get("NONE", 0) >= x["tokens"]
    assert results[0]["speedup_vs_piecewise"] == 1.0
    assert results[1]["speedup_vs_piecewise"] == pytest.approx(
        results[1]["tokens_per_s"] / results[0]["tokens_per_s"], rel=1e-2)
