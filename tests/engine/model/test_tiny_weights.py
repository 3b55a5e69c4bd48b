"""The tiny model's real weight files (voxcap/engine/model/tiny_weights.py): the real model's layout, the
same bytes from the same seed, and weight files that cannot be loaded refused with one clear line
before vLLM starts (voxcap/engine/model/weights_check.py). That vLLM loads every tensor of the file, and
that its tokens follow the audio, is shown by the session engine
(tests/engine/vllm_adapter/test_parity.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from voxcap.engine.model.folder import inspect_model_dir
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.engine.model.tiny_weights import (
    ENCODER_PREFIX,
    WEIGHTS_FILE,
    random_tensors,
    tensor_shapes,
    to_bf16_bytes,
    write_safetensors,
)
from voxcap.engine.sizing import memory
from voxcap.errors import ModelDirError

# the real model's params.json, as far as the weights' shapes go
REAL = {**memory.REAL_MODEL_PARAMS, "tied_embeddings": True, "ada_rms_norm_t_cond": True,
        "ada_rms_norm_t_cond_dim": 32}


def test_the_real_models_layout():
    """Mistral's consolidated.safetensors of Voxtral-Mini-4B-Realtime-2602 holds 711 tensors: 421
    in the audio encoder, 11 in each of 26 decoder layers, the token embeddings, the adapter's two
    matrices and the final norm; 8.86 GB in bf16 (memory.REAL_WEIGHTS_BYTES)."""
    shapes = tensor_shapes(REAL)
    assert len(shapes) == 711
    assert sum(k.startswith(ENCODER_PREFIX) for k in shapes) == 421
    assert sum(k.startswith("layers.") for k in shapes) == 26 * 11
    assert shapes["mm_streams_embeddings.embedding_module.tok_embeddings.weight"] == (131072, 3072)
    assert shapes["layers.0.attention.wk.weight"] == (8 * 128, 3072)
    assert shapes["layers.25.ada_rms_norm_t_cond.0.weight"] == (32, 3072)
    assert shapes[f"{ENCODER_PREFIX}.conv_layers.0.conv.weight"] == (1280, 128, 3)
    assert shapes[f"{ENCODER_PREFIX}.transformer.layers.31.feed_forward.w2.bias"] == (1280,)
    assert f"{ENCODER_PREFIX}.transformer.layers.0.attention.wk.bias" not in shapes  # k has none
    assert shapes["mm_streams_embeddings.embedding_module.audio_language_projection.0.weight"] == (
        3072, 4 * 1280)
    assert "output.weight" not in shapes  # tied embeddings
    params = sum(int(np.prod(s)) for s in shapes.values())
    assert abs(2 * params - memory.REAL_WEIGHTS_BYTES) / memory.REAL_WEIGHTS_BYTES < 0.01


def test_same_seed_same_bytes_and_read_back_as_written(tmp_path):
    import torch
    from safetensors import safe_open

    a = write_tiny_model(tmp_path / "a", weights_seed=3) / WEIGHTS_FILE
    b = write_tiny_model(tmp_path / "b", weights_seed=3) / WEIGHTS_FILE
    c = write_tiny_model(tmp_path / "c", weights_seed=4) / WEIGHTS_FILE
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    params = json.loads((tmp_path / "a" / "params.json").read_text())
    want = random_tensors(params, seed=3)
    with safe_open(str(a), "pt") as f:  # the reader vLLM uses
        assert set(f.keys()) == set(tensor_shapes(params)) == set(want)
        for name in want:
            t = f.get_tensor(name)
            assert t.dtype == torch.bfloat16 and tuple(t.shape) == want[name].shape
            np.testing.assert_allclose(t.float().numpy(), want[name], rtol=2**-8, atol=0)
    norm = want["norm.weight"]
    assert (norm == 1).all()
    # </s> is never sampled (a session would end there, its remaining audio untranscribed)
    emb = want["mm_streams_embeddings.embedding_module.tok_embeddings.weight"]
    assert not emb[2].any() and emb[3].any()
    w = want["layers.0.feed_forward.w1.weight"]
    assert 0.5 < w.std() / np.sqrt(2 / sum(w.shape)) < 1.5  # Xavier


def test_bf16_rounds_to_nearest_even():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5, 0.0], np.float32)
    got = np.frombuffer(to_bf16_bytes(x), "<u2")
    assert list(got) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0]


@pytest.fixture
def weights_model(tmp_path):
    return write_tiny_model(tmp_path / "model", weights_seed=0)


def _refused(model, match):
    before = {p.name: p.read_bytes() for p in model.iterdir() if p.is_file()}
    with pytest.raises(ModelDirError, match=match) as e:
        inspect_model_dir(model)
    # nothing lost: the folder is as it was (a partial download can be resumed)
    assert {p.name: p.read_bytes() for p in model.iterdir() if p.is_file()} == before
    assert "\n" not in e.value.message
    return e.value


def test_good_weights_pass(weights_model):
    assert inspect_model_dir(weights_model).has_weights


def test_truncated_weights(weights_model):
    f = weights_model / WEIGHTS_FILE
    f.write_bytes(f.read_bytes()[:-1000])
    err = _refused(weights_model, "cannot be used: it is incomplete")
    assert "download the model again" in err.fix


def test_unfinished_download(weights_model):
    f = weights_model / WEIGHTS_FILE
    f.rename(f.with_name(WEIGHTS_FILE + ".part"))
    err = _refused(weights_model, "not downloaded yet: only consolidated.safetensors.part")
    assert "resumes" in err.fix
    # with --dummy-weights the partial file is no obstacle
    assert inspect_model_dir(weights_model, dummy_weights=True).has_weights is False


def test_wrong_shape_and_missing_tensor(weights_model):
    params = json.loads((weights_model / "params.json").read_text())
    tensors = random_tensors(params)
    tensors["layers.1.feed_forward.w1.weight"] = np.zeros((64, 64), np.float32)
    write_safetensors(weights_model / WEIGHTS_FILE, tensors)
    _refused(weights_model, r"wrong shape .*layers.1.feed_forward.w1.weight: \[64, 64\], the "
                            r"model needs \[128, 64\]")
    del tensors["layers.1.feed_forward.w1.weight"]
    write_safetensors(weights_model / WEIGHTS_FILE, tensors)
    _refused(weights_model, "1 of the 57 tensors the model needs are missing, e.g. "
                            "layers.1.feed_forward.w1.weight")


def test_weights_of_another_model(weights_model, tmp_path):
    other = write_tiny_model(tmp_path / "other")
    params = json.loads((other / "params.json").read_text())
    params["dim"] = 96
    (weights_model / "params.json").write_text(json.dumps(params))
    _refused(weights_model, "wrong shape")


def test_damaged_header(weights_model):
    (weights_model / WEIGHTS_FILE).write_bytes(b"\xff" * 64)
    _refused(weights_model, "header is damaged")


def test_unreadable_weights_and_folder():
    """As a user without read access (the tests run as root, who reads everything); in a folder
    of its own under /tmp, which that user can reach (pytest's own tmp folders are root's only)."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed")
    top = Path(tempfile.mkdtemp(prefix="voxcap-unreadable-"))
    try:
        _unreadable(write_tiny_model(top / "model", weights_seed=0), top)
    finally:
        shutil.rmtree(top)


def _unreadable(weights_model, top):
    probe = ("import sys\nfrom voxcap.engine.model.folder import inspect_model_dir\n"
             "from voxcap.errors import ModelDirError\n"
             "try:\n    inspect_model_dir(sys.argv[1])\n"
             "except ModelDirError as e:\n    print(e.message)\nelse:\n    print('loaded')\n")
    top.chmod(0o755)

    def as_nobody():
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            sys.executable, "-c", probe, str(weights_model)],
                           capture_output=True, text=True, timeout=60,
                           env={"PYTHONPATH": ":".join(sys.path), "HOME": "/tmp"})
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    weights_model.chmod(0o755)
    for f in weights_model.iterdir():
        f.chmod(0o644)
    assert as_nobody() == "loaded"
    (weights_model / WEIGHTS_FILE).chmod(0o600)
    assert as_nobody() == (f"The weights {weights_model / WEIGHTS_FILE} cannot be used: it cannot "
                           "be read (Permission denied)")
    weights_model.chmod(0o711)  # the folder's listing unreadable
    assert as_nobody().startswith("Model directory cannot be read (Permission denied)")


def test_cli_says_it_in_one_line_before_any_engine_starts(weights_model, tmp_path):
    import soundfile as sf

    f = weights_model / WEIGHTS_FILE
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])  # a download cut in half
    wav = tmp_path / "a.wav"
    sf.write(wav, np.zeros(16000, np.float32), 16000)
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", "transcribe", str(wav), "--model",
                        str(weights_model)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith("audio: ")]
    assert lines[0].startswith(f"error: The weights {f} cannot be used: it is incomplete"), lines
    assert lines[1].startswith("  fix: download the model again") and len(lines) == 2, lines
    assert "engine:" not in r.stderr and "Traceback" not in r.stderr
