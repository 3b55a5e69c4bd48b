"""The capacity benchmark's speech from a file (``--audio``): read and resampled in Python, so a
machine without espeak-ng or sox (the GPU machines) runs it. Real files on disk; PATH emptied
so that calling either program fails."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from benchmarks.capacity import speech
from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def no_external_programs(monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_a_44k_stereo_wav_becomes_16k_mono_pcm16_looped_to_length(tmp_path):
    t = np.arange(44_100) / 44_100  # 1 s of a 440 Hz tone, the same in both channels
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    wav = tmp_path / "tone44k.wav"
    sf.write(str(wav), np.stack([tone, tone], axis=1), 44_100, subtype="PCM_16")

    pcm = speech(2.5, str(wav))

    assert pcm.dtype == np.int16
    assert len(pcm) == int(2.5 * SAMPLE_RATE) // STEP_SAMPLES * STEP_SAMPLES
    one_second = pcm[:SAMPLE_RATE].astype(np.float64)
    assert np.argmax(np.abs(np.fft.rfft(one_second))) == 440  # 1 Hz bins: still 440 Hz at 16 kHz
    assert 0.45 * 32768 < np.abs(one_second).max() < 0.55 * 32768
    assert np.array_equal(pcm[SAMPLE_RATE:2 * SAMPLE_RATE], pcm[:SAMPLE_RATE])  # looped


def test_the_speech_file_the_gpu_scripts_pass_is_16k_speech():
    path = REPO / "benchmarks" / "audio" / "speech16k.flac"
    pcm = speech(10.0, str(path))
    assert len(pcm) == int(10.0 * SAMPLE_RATE) // STEP_SAMPLES * STEP_SAMPLES
    assert sf.info(str(path)).samplerate == SAMPLE_RATE
    assert np.abs(pcm.astype(np.int32)).mean() > 300  # speech, not silence


def test_a_missing_file_is_one_line_with_the_fix(tmp_path):
    with pytest.raises(SystemExit) as exc:
        speech(1.0, str(tmp_path / "nowhere.wav"))
    message = str(exc.value)
    assert message.startswith("capacity: --audio ") and "check the path" in message
    assert "\n" not in message


def test_without_a_file_a_missing_espeak_is_one_line_naming_audio():
    with pytest.raises(SystemExit) as exc:
        speech(1.0)
    assert "espeak-ng is not installed" in str(exc.value) and "--audio" in str(exc.value)
