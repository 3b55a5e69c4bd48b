"""The terminal names a setting by its flag: what the commands print and what the log keeps carry
the flags, never the core's markers (``voxcap.setting_refs``), and read as they did before."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from voxcap import logs
from voxcap.commands import main
from voxcap.setting_refs import MARKER


@pytest.fixture
def empty_folder(tmp_path):
    (tmp_path / "model").mkdir()
    return str(tmp_path / "model")


def _said(capsys) -> str:
    out = capsys.readouterr()
    return out.out + out.err


def test_an_error_and_its_fix_name_flags(capsys, tmp_path, empty_folder):
    wav = tmp_path / "a.wav"
    sf.write(wav, np.zeros(16000, dtype="float32"), 16000)
    assert main(["transcribe", "--model", empty_folder, str(wav)]) != 0
    said = _said(capsys)
    assert "with `voxcap download` (about 9 GB; --dir DIR picks the folder), or run " \
        "`voxcap make-tiny-model DIR` and use --dummy-weights for a self-check" in said, said
    assert main(["transcribe", "--engine", "remote", "--server", "nonsense", str(wav)]) != 0
    said = _said(capsys)
    assert "fix: give the server's address, e.g. --server ws://gpu-box:8000" in said, said
    assert MARKER.search(said) is None, said
    kept = logs.tail(50)  # the log says the fix as the terminal did
    assert "e.g. --server ws://gpu-box:8000" in kept and MARKER.search(kept) is None, kept


def test_doctors_report_and_json_name_flags(capsys, empty_folder):
    main(["doctor", "--model", empty_folder])
    report = _said(capsys)
    assert "`voxcap download`" in report and MARKER.search(report) is None, report
    main(["doctor", "--json", "--model", empty_folder])
    text = capsys.readouterr().out
    assert MARKER.search(text) is None, text
    model = {c["id"]: c for c in json.loads(text)["checks"]}["model"]
    assert "use --dummy-weights for a self-check" in model["fix"], model
