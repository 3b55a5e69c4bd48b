"""A start-up failure inside vLLM reaches the user as one line and its fix, never as vLLM's
tracebacks; those go to voxcap.log (vLLM prints two full tracebacks for one failure)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

pytestmark = pytest.mark.engine


def transcribe(tmp_path, tiny_model_dir, *extra, env_extra=None):
    audio = tmp_path / "a.wav"
    sf.write(audio, np.zeros(16000, np.float32), 16000)
    env = dict(os.environ, VOXCAP_STATE_DIR=str(tmp_path / "state"), **(env_extra or {}))
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
    """Refused before vLLM is even imported (~12 s of CPU here): the person sees it at once."""
    r, _ = transcribe(tmp_path, tiny_model_dir, "--precision", "fp8",
                      env_extra={"PYTHONPROFILEIMPORTTIME": "1"})  # Python lists each import
    library_log = tmp_path / "state" / "vllm.log"  # where stderr goes while vLLM is imported
    output = r.stderr + (library_log.read_text(errors="replace") if library_log.exists() else "")
    imports = [ln for ln in output.splitlines() if ln.startswith("import time:")]
    stderr = "\n".join(ln for ln in r.stderr.splitlines() if not ln.startswith("import time:"))
    assert r.returncode == 2, stderr
    line = one_error_line(stderr)
    assert "FP8 weights cannot run" in line and "no working FP8 kernels" in line, line
    assert "loading weights" not in stderr and "Traceback" not in stderr
    assert any(ln.endswith("voxcap.engine.inprocess.engine") for ln in imports), imports[-5:]
    vllm = [ln for ln in imports if re.search(r"\|\s+(vllm|torch)(\.|$)", ln)]
    assert not vllm, f"vLLM was imported before the refusal: {vllm[:3]}"
