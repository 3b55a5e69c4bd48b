"""The model folder vLLM is given (model_dir_for_vllm): no failing HF-config retries at start-up."""

from __future__ import annotations

import json

from support.vllm_logs import vllm_errors

from voxcap.engine.model.folder import (
    VLLM_DEFAULT_MAX_POSITIONS,
    inspect_model_dir,
    model_dir_for_vllm,
)
from voxcap.engine.model.tiny import write_tiny_model


def _model_like_the_real_one(tmp_path, weights_file: bool = False):
    """The tiny model with params.json lacking max_position_embeddings, as the real model's does."""
    model = write_tiny_model(tmp_path / "model", weights_seed=0 if weights_file else None)
    params = json.loads((model / "params.json").read_text())
    del params["max_position_embeddings"]
    (model / "params.json").write_text(json.dumps(params))
    return model, params


def test_view_adds_the_default_and_links_the_rest(tmp_path):
    model, params = _model_like_the_real_one(tmp_path, weights_file=True)
    before = (model / "params.json").read_bytes()
    view = model_dir_for_vllm(inspect_model_dir(model), tmp_path / "cache")

    assert view != model and (model / "params.json").read_bytes() == before  # user's folder untouched
    seen = json.loads((view / "params.json").read_text())
    assert seen == {**params, "max_position_embeddings": VLLM_DEFAULT_MAX_POSITIONS}
    for name in ("tekken.json", "consolidated.safetensors"):
        assert (view / name).is_symlink() and (view / name).resolve() == (model / name).resolve()

    (model / "consolidated.safetensors").unlink()  # the model folder changed: the view follows
    assert model_dir_for_vllm(inspect_model_dir(model, True), tmp_path / "cache") == view
    assert not (view / "consolidated.safetensors").is_symlink()


def test_a_model_that_says_its_length_keeps_it_and_the_dtype_is_written(tmp_path):
    model = write_tiny_model(tmp_path / "model")
    params = json.loads((model / "params.json").read_text())
    view = model_dir_for_vllm(inspect_model_dir(model, True), tmp_path / "cache", "bfloat16")
    assert json.loads((view / "params.json").read_text()) == {**params, "dtype": "bfloat16"}
    # another dtype later (another build): the same view, its params.json rewritten
    assert model_dir_for_vllm(inspect_model_dir(model, True), tmp_path / "cache", "float32") == view
    assert json.loads((view / "params.json").read_text())["dtype"] == "float32"


def test_vllm_reads_the_same_config_without_the_failing_retries(tmp_path):
    from vllm.transformers_utils.config import get_config

    model, _ = _model_like_the_real_one(tmp_path)
    view = model_dir_for_vllm(inspect_model_dir(model, dummy_weights=True), tmp_path / "cache")
    with vllm_errors() as errors:
        original = get_config(model, trust_remote_code=False, config_format="mistral")
        assert any("Error parsing config" in e for e in errors)  # what the view avoids
        errors.clear()
        viewed = get_config(view, trust_remote_code=False, config_format="mistral")
        assert errors == []
    assert viewed.to_dict() == original.to_dict()
