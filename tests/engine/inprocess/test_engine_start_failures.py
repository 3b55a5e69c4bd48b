"""A start-up failure inside vLLM reaches the user as one line and its fix, never as vLLM's
tracebacks; those go to voxcap.log (vLLM prints two full tracebacks for one failure)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

pytestmark = pytest.mark.engine


def transcribe(tmp_path, tiny_model_dir, *extra):
    audio = tmp_path / "a.wav"
    sf.write(audio, np.zeros(16000, np.float32), 16000)
    env = dict(os.environ, VOXCAP_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", "transcribe", str(audio), "--model",
                        str(tiny_model_dir), "--dummy-weights", "--eager", "--no-journal", *extra],
                       capture_output=True, text=True, timeout=400, env=env)
    log = (tmp_path / "state" / "voxcap.log").read_text(encoding="utf-8", errors="replace")
    return r, log


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    errors = [i for i, ln in enumerate(lines) if ln.startswith("error: ")]
    assert len(errors) == 1, stderr
    assert lines[errors[0] + 1].startswith("  fix: ") and errors[0] + 2 == len(lines), stderr
    return lines[errors[0]]


def test_a_failure_inside_vllms_engine_core_is_one_line(tiny_model_dir, tmp_path):
    """vLLM's CPU build fails in its worker process when asked for online FP8 (a stub kernel):
    a real failure deep inside vLLM's children, reported by voxcap in one line with its root
    cause; the children's tracebacks are in voxcap.log, not on the terminal."""
    r, log = transcribe(tmp_path, tiny_model_dir, "--engine-arg", "quantization=fp8_per_tensor",
                        "--engine-arg", "dtype=bfloat16")
    assert r.returncode == 2, r.stderr
    line = one_error_line(r.stderr)
    assert "static_scaled_fp8_quant" in line and "See root cause above" not in line, line
    for noise in ("Traceback", "Process EngineCore", "ERROR "):
        assert noise not in r.stderr, r.stderr
    assert "vLLM's processes wrote to stderr" in log and "Traceback" in log


def test_a_precision_vllms_cpu_build_cannot_run_is_refused_before_it_starts(tiny_model_dir,
                                                                            tmp_path):
    r, _ = transcribe(tmp_path, tiny_model_dir, "--precision", "fp8")
    assert r.returncode == 2, r.stderr
    line = one_error_line(r.stderr)
    assert "FP8 weights cannot run" in line and "no working FP8 kernels" in line, line
    assert "loading weights" not in r.stderr and "Traceback" not in r.stderr
