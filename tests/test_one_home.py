"""Facts with one home (tests/contracts/one_home.py): the framing numbers and the vLLM pin are
written only where they are defined, and the check catches a copy."""

from __future__ import annotations

from pathlib import Path

from contracts.one_home import literals, pyproject_pins

from voxcap.engine.vllm_adapter.pin import PINNED_VLLM

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("voxcap", "benchmarks")


def test_framing_and_pin_live_in_one_place():
    problems = literals(ROOT, FOLDERS, PINNED_VLLM)
    assert not problems, "\n".join(problems)


def test_pyproject_pins_the_release_the_code_checks():
    assert pyproject_pins(ROOT / "pyproject.toml") == {PINNED_VLLM}


def test_a_copied_number_or_release_is_caught(tmp_path):
    pkg = tmp_path / "voxcap"
    (pkg / "engine" / "vllm_adapter").mkdir(parents=True)
    (pkg / "framing.py").write_text("SAMPLE_RATE = 16000\nSTEP_SAMPLES = 1280\n")
    (pkg / "engine" / "vllm_adapter" / "pin.py").write_text('PINNED_VLLM = "0.32.0"\n')
    (pkg / "stats.py").write_text(
        '"""Steps of 1280 samples at 16000 Hz, checked against vLLM 0.32.0."""\n'
        "# a comment may say 1280 too\n"
        "STEP = 1_280\n"
        "rate = 16000.0\n"
        "span = (k * 0.08, k / 12.5, 0.080001)\n"
        'minutes = f"{length / 12.5 / 60:.1f} min"  # one token on Python 3.11\n'
        'def why():\n    return f"needs vllm {0}==0.32.0"\n'
        'VERSION = "0.32.01"  # another release\n')
    problems = literals(tmp_path, ("voxcap",), "0.32.0")
    assert [p.split(":")[:2] for p in problems] == [
        ["voxcap/stats.py", "3"], ["voxcap/stats.py", "4"], ["voxcap/stats.py", "5"],
        ["voxcap/stats.py", "5"], ["voxcap/stats.py", "6"], ["voxcap/stats.py", "8"]], problems
