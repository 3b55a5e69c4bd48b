"""voxcap's KV-cache arithmetic (engine/sizing/memory.py) against vLLM's own: its functions, and a
running engine (CPU build) started with voxcap's default budget."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from voxcap.engine.model.folder import inspect_model_dir
from voxcap.engine.settings import DEFAULT_MAX_MODEL_LEN, InProcessSettings
from voxcap.engine.sizing import memory
from voxcap.errors import ConfigError

REAL_PARAMS = memory.REAL_MODEL_PARAMS


def _tiny_params(tiny_model_dir) -> dict:
    return json.loads((Path(tiny_model_dir) / "params.json").read_text())


def _vllm_layer_specs(params: dict, dtype_bytes: int, block_size: int) -> dict:
    """The per-layer specs vLLM 0.32's Voxtral Realtime layers report (Attention and
    WhisperCausalAttentionWithBlockPooling.get_kv_cache_spec), built with vLLM's classes."""
    import torch
    from vllm.utils.math_utils import cdiv
    from vllm.v1.kv_cache_interface import SlidingWindowSpec

    # FP8 KV cache (kv_cache_dtype="fp8"): vLLM stores it as uint8, decoder and encoder alike
    # (WhisperCausalAttentionWithBlockPooling takes cache_config.cache_dtype too)
    dtype = {1: torch.uint8, 2: torch.bfloat16, 4: torch.float32}[dtype_bytes]
    whisper = params["multimodal"]["whisper_model_args"]
    enc = whisper["encoder_args"]
    pool = whisper["downsample_args"]["downsample_factor"]
    specs = {}
    for i in range(params["n_layers"]):
        specs[f"language_model.layers.{i}"] = SlidingWindowSpec(
            block_size=block_size, num_kv_heads=params["n_kv_heads"], head_size=params["head_dim"],
            dtype=dtype, sliding_window=params["sliding_window"])
    for i in range(enc["n_layers"]):
        specs[f"whisper_encoder.layers.{i}"] = SlidingWindowSpec(
            block_size=block_size, num_kv_heads=enc["n_kv_heads"], head_size=enc["head_dim"],
            dtype=dtype, sliding_window=cdiv(enc["sliding_window"], pool) + 1,
            tokens_per_state=Fraction(1, pool))
    return specs


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["LBHNC", "LBNHC"])
def test_kv_plan_matches_vllms_own_functions(tiny_model_dir, layout):
    """Grouping, page unification, padding and sliding-window reservations as vLLM computes
    them, for the tiny model and the real model's shape, over block sizes and batch budgets,
    with the model's dtype and with the FP8 KV cache (precision fp8_kv)."""
    from vllm.config import VllmConfig
    from vllm.v1.core import kv_cache_utils as ku

    cases = 0
    for params, dtype_bytes in ((_tiny_params(tiny_model_dir), 4), (REAL_PARAMS, 2),
                                (_tiny_params(tiny_model_dir), 1), (REAL_PARAMS, 1)):
        for block_size in (16, 128):
            specs = _vllm_layer_specs(params, dtype_bytes, block_size)
            for max_model_len in (1024, 4096, 8192, 45000):
                for step_tokens in (256, 2048):
                    for batches in (1, 2):
                        cfg = VllmConfig()
                        cfg.cache_config.kv_cache_layout = layout
                        cfg.model_config = type("M", (), {"max_model_len": max_model_len})()
                        cfg.scheduler_config.max_num_batched_tokens = step_tokens
                        cfg.scheduler_config.async_scheduling = batches == 2
                        in_flight = cfg.max_in_flight_tokens
                        groups = ku.get_kv_cache_groups(cfg, dict(specs))
                        plan = memory.kv_plan(params, max_model_len, dtype_bytes, block_size, in_flight)
                        where = (params["dim"], block_size, max_model_len, in_flight, layout)
                        assert plan.bytes_per_block == ku._pool_bytes_per_block(cfg, groups), where
                        assert plan.session_bytes == ku._max_memory_usage_bytes_from_groups(
                            cfg, groups), where
                        assert plan.check_bytes == ku.max_memory_usage_bytes(cfg, specs.values()), where
                        cases += 1
    assert cases == 4 * 2 * 4 * 2 * 2


def test_real_model_session_matches_what_vllm_said_on_the_h200():
    """vLLM on the H200 (block 16, its default 2048-token batches, async scheduling) refused
    voxcap's old budget with "5.22 GiB KV cache is needed" for one 8192-token session."""
    plan = memory.kv_plan(REAL_PARAMS, 8192, 2, 16, 2 * 2048)
    assert f"{plan.session_bytes / memory.GIB:.2f}" == "5.22"
    # voxcap's own batch budget (256 tokens) keeps the encoder's in-flight reservation small
    ours = memory.footprint(None, 1, None)
    assert ours.plan.session_bytes < 0.4 * plan.session_bytes


def test_budget_refused_with_numbers_when_it_cannot_hold_the_streams():
    plan = memory.kv_plan(REAL_PARAMS, 8192, 2, 16, 512)
    memory.check_budget(plan, plan.budget_bytes(2), 2)  # exactly enough
    with pytest.raises(ConfigError) as err:
        memory.check_budget(plan, plan.budget_bytes(2) - 1, 2)
    assert "2 stream(s) need" in err.value.message and "GiB" in err.value.fix


def test_session_length_defaults_to_what_the_model_allows(tmp_path):
    from voxcap.engine.model.tiny import write_tiny_model

    short = inspect_model_dir(write_tiny_model(tmp_path / "short", max_len=4096), dummy_weights=True)
    long_ = inspect_model_dir(write_tiny_model(tmp_path / "long"), dummy_weights=True)
    assert short.max_model_len == 4096 and long_.max_model_len == 131072
    s = InProcessSettings(str(short.path), dummy_weights=True).validated()
    assert s.for_model(short.max_model_len).max_model_len == 4096
    assert s.for_model(long_.max_model_len).max_model_len == DEFAULT_MAX_MODEL_LEN
    explicit = InProcessSettings(str(short.path), dummy_weights=True, max_model_len=8192).validated()
    with pytest.raises(ConfigError) as err:
        explicit.for_model(short.max_model_len)
    assert "8192" in err.value.message and "4096" in err.value.message


@pytest.mark.engine
def test_running_engine_lays_out_the_kv_cache_as_voxcap_sized_it(engine):
    """The session engine runs on the defaults: vLLM's own report of its KV cache (tokens and
    full-length sessions, from kv_cache_utils' log line) is what voxcap's plan predicts."""
    info = engine.ready_info
    assert info.max_model_len == 4096  # the tiny model's maximum, not the 8192 default
    plan = engine.kv_plan
    assert engine.kv_budget == plan.budget_bytes(engine.settings.max_streams)
    assert info.kv_cache_tokens == plan.tokens(engine.kv_budget)
    assert info.kv_cache_sessions == pytest.approx(plan.sessions(engine.kv_budget), abs=0.005)
    assert engine.settings.max_streams <= info.kv_cache_sessions < engine.settings.max_streams + 0.5
    assert not [n for n in info.notes if "KV" in n], info.notes


@pytest.mark.parametrize(("total_gib", "free_gib", "kind", "words"), [
    (80, 79, "fits", "bfloat16 (the model's own precision): fits this 80 GB card (≈13.0 GiB"),
    (16, 14.0, "fits", "bfloat16"),  # a 16 GB card with 2 GiB used by the desktop
    (16, 12.5, "fits", "FP8 weights: fits this 16 GB card"),  # bfloat16 does not fit: FP8 does
    (12, 11.5, "fits", "FP8 weights: fits this 12 GB card"),
    (8, 7.5, "fits", "4-bit weights + FP8 KV cache: fits this 8 GB card"),
    # the least that starts (one stream), as the start gate says: not the best choice on an
    # empty card (which said 6.27 GiB here, while the gate started at 5.41)
    (8, 4, "not_free", "has 4.00 GiB free now; 4-bit weights + FP8 KV cache for one stream "
                       "needs ≈4.96 GiB free to start"),
    (6, 6, "fewer_streams", "4-bit weights + FP8 KV cache: fits this 6 GB card"),  # one stream
    (6, 5.0, "fewer_streams", "4-bit weights + FP8 KV cache: fits this 6 GB card"),  # desktop on it
    (4, 4, "too_small", "this 4 GB card is too small"),
])
def test_gpu_verdict_for_the_real_model(total_gib, free_gib, kind, words):
    from voxcap.engine.sizing.memory import Sizing
    from voxcap.engine.sizing.precision import GpuFacts
    from voxcap.engine.sizing.verdict import verdict

    gpu = GpuFacts(int(total_gib * memory.GIB), int(free_gib * memory.GIB), (8, 9))
    v = verdict(None, Sizing(), gpu)
    assert v.kind == kind and words in v.line, v.line
    assert bool(v.fix) == (kind in ("not_free", "too_small"))
