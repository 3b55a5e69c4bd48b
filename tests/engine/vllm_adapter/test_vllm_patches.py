"""voxcap's fixes for vLLM 0.32.0 (voxcap/engine/vllm_adapter/patches.py): the session fix and the
token carry.

The end-to-end test streams the same audio through a bare vLLM realtime loop twice, each in its
own process and engine, with the fix off and on (benchmarks/step_growth.py), and requires the
same token ids; the unit tests check the bookkeeping on vLLM's own Request and encoder-cache
manager classes, and the version guard.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from voxcap.engine.vllm_adapter import patches as vllm_patches

ROOT = Path(__file__).resolve().parents[3]


def _session(n_items: int, computed: int, hash_block: int | None = None):
    """A real vLLM Request holding ``n_items`` one-token audio items at offsets 39, 40, ...;
    ``hash_block``: prefix caching on, with vLLM's block hasher at that block size."""
    from vllm.multimodal.inputs import MultiModalFeatureSpec, PlaceholderRange
    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import get_hash_fn_by_name
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.request import Request

    hasher = None
    if hash_block:
        hash_fn = get_hash_fn_by_name("sha256")
        init_none_hash(hash_fn)
        hasher = get_request_block_hasher(hash_block, hash_fn)

    feats = [MultiModalFeatureSpec(data=None, modality="audio", identifier=f"h{i}",
                                   mm_position=PlaceholderRange(offset=39 + i if i else 1,
                                                                length=1 if i else 38))
             for i in range(n_items)]
    req = Request(request_id="r", prompt_token_ids=list(range(39 + n_items)),
                  sampling_params=SamplingParams(max_tokens=1), pooling_params=None,
                  mm_features=feats, block_hasher=hasher)
    req.num_computed_tokens = computed
    return req


def _scheduler(block: int = 16):
    from vllm.v1.core.encoder_cache_manager import EncoderCacheManager

    return SimpleNamespace(hash_block_size=block, ec_connector=None,
                           encoder_cache_manager=EncoderCacheManager(cache_size=8192))


def test_consumed_items_leave_and_cached_indices_shift():
    sched = _scheduler(block=16)
    # prefix caching on: items 0..20 end at or before 60, but only those before the last block
    # boundary (48) can go: the partly computed block's hash still needs the others
    req = _session(n_items=30, computed=60, hash_block=16)
    mgr = sched.encoder_cache_manager
    last = len(req.mm_features) - 1
    mgr.allocate(req, last)  # the newest item still holds an encoder-cache reference
    newest = req.mm_features[last].identifier

    dropped = vllm_patches.drop_consumed_mm_features(sched, req)

    # items ending at or before the block frontier (48) go: item 0 (ends 39) and 1..8 (40..47)
    assert dropped == 9
    assert req.mm_features[0].identifier == "h9"
    assert all(f.mm_position.offset + f.mm_position.length > 48 for f in req.mm_features)
    # the encoder-cache manager's index for the newest item follows it
    (idx,) = mgr.get_cached_input_ids(req)
    assert req.mm_features[idx].identifier == newest
    mgr.free_encoder_input(req, idx)
    assert newest in mgr.freeable  # freed under the right hash


def test_without_prefix_caching_every_computed_item_goes():
    sched = _scheduler(block=16)
    req = _session(n_items=30, computed=60)  # no block hasher: no block boundary to respect
    assert vllm_patches.drop_consumed_mm_features(sched, req) == 21  # items 0..20 end <= 60
    assert req.mm_features[0].identifier == "h21"


def test_item_still_in_encoder_cache_is_kept():
    sched = _scheduler(block=1)
    req = _session(n_items=10, computed=45)
    sched.encoder_cache_manager.allocate(req, 2)  # a reference not yet freed
    assert vllm_patches.drop_consumed_mm_features(sched, req) == 2
    assert req.mm_features[0].identifier == "h2"
    assert sched.encoder_cache_manager.get_cached_input_ids(req) == {0}


def test_newest_item_always_kept():
    sched = _scheduler(block=1)
    req = _session(n_items=5, computed=10_000)
    assert vllm_patches.drop_consumed_mm_features(sched, req) == 4
    assert [f.identifier for f in req.mm_features] == ["h4"]
    assert vllm_patches.drop_consumed_mm_features(sched, req) == 0


def _update(prompt_ids, carry: bool):
    from vllm.sampling_params import SamplingParams
    from vllm.v1.request import StreamingUpdate

    extra = {vllm_patches.CARRY_KEY: True} if carry else None
    return StreamingUpdate(mm_features=None, prompt_token_ids=list(prompt_ids), max_tokens=1,
                           arrival_time=0.0,
                           sampling_params=SamplingParams(max_tokens=1, extra_args=extra))


def test_carry_puts_the_last_sampled_token_first():
    req = _session(n_items=3, computed=41)
    req.append_output_token_ids(7777)  # sampled, not yet computed: what vLLM discards
    update = vllm_patches.carry_last_token(req, _update([0], carry=True))
    assert update.prompt_token_ids == [7777]
    # not asked for: left alone (vLLM's realtime server, the echo)
    assert vllm_patches.carry_last_token(req, _update([123], carry=False)).prompt_token_ids == [123]


def test_carry_without_a_sampled_token_keeps_the_placeholder_and_says_so(caplog):
    req = _session(n_items=3, computed=42)  # every token computed, none pending
    with caplog.at_level(logging.WARNING, logger="vllm.voxcap_patches"):
        update = vllm_patches.carry_last_token(req, _update([0], carry=True))
    assert update.prompt_token_ids == [0]
    assert any("no sampled token to carry" in r.getMessage() for r in caplog.records)


def test_other_vllm_version_is_left_alone(monkeypatch, caplog):
    import vllm
    from vllm.v1.core.sched.scheduler import Scheduler

    before = Scheduler._update_request_as_session
    monkeypatch.setattr(vllm, "__version__", "0.33.0")
    with caplog.at_level(logging.WARNING, logger="vllm.voxcap_patches"):
        assert vllm_patches.apply_session_fix() is False
        assert vllm_patches.apply_token_carry() is False
    assert Scheduler._update_request_as_session is before
    assert any("written for vLLM 0.32.0, this is 0.33.0" in r.getMessage() for r in caplog.records)


def test_flag_off_applies_nothing(monkeypatch):
    monkeypatch.delenv(vllm_patches.SESSION_FIX_ENV, raising=False)
    monkeypatch.delenv(vllm_patches.TOKEN_CARRY_ENV, raising=False)
    assert vllm_patches.apply_enabled() == []


@pytest.fixture(scope="module")
def growth(tmp_path_factory):
    """benchmarks.step_growth's four variants over the same 16 s of audio (one run for the
    fix's and the carry's tests: the starts are most of the time): "off" (vLLM as installed) in
    a vLLM of its own; "on" (the session fix, the echo), "carry" and "blind" (the fix on,
    placeholders ahead, the request asking for the carry or not) as three requests in another
    (``--share-engine``: caches reset between them). {variant: its run}."""
    from voxcap.engine.model.tiny import write_tiny_model

    tmp = tmp_path_factory.mktemp("growth")
    model = write_tiny_model(tmp / "tiny")
    out = tmp / "growth.json"
    env = dict(os.environ, OMP_NUM_THREADS="1", VLLM_CPU_OMP_THREADS_BIND="nobind")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.step_growth", "--model", str(model),
         "--dummy-weights", "--enforce-eager", "--duration", "16", "--bucket", "50", "--trace-encoder",
         # block hashes every 16 tokens instead of 128: the fix then lets items go every 16
         # steps, often enough to matter in 16 s of audio
         "--extra-args", '{"prefix_match_unit": 16}',
         "--variants", "on,off,carry,blind", "--share-engine", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=1500, cwd=ROOT)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads(out.read_text())
    runs = {r["variant"]: r for r in res["runs"]}
    assert list(runs) == ["on", "off", "carry", "blind"]
    assert runs["off"]["engine_variants"] == ["off"]
    assert runs["on"]["engine_variants"] == ["on", "carry", "blind"]
    for run in runs.values():  # a variant whose engine failed says why
        assert "failure" not in run, f"{run['variant']}: {run['failure']}\n{run['stderr_tail']}"
    return res, runs


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.timeout(1800)  # the fixture's two vLLM starts, on a loaded 2-core machine
def test_same_tokens_with_and_without_fix(growth):
    res, runs = growth
    off, on = runs["off"], runs["on"]
    assert not off["fix_applied"] and on["fix_applied"]
    # 16 s of audio: one token per 80 ms plus the flush
    assert len(off["tokens"]) >= 150 and len(on["tokens"]) == len(off["tokens"])
    assert on["tokens"] == off["tokens"]
    # across off, on and carry (the control "blind" is meant to differ)
    assert res["tokens_identical"] is True
    assert res["logprob_max_diff"] == 0.0
    assert off["vs_first"]["logprob_max_diff"] == 0.0  # off against on
    # The dummy-weight model's logits hardly depend on its input, so the tokens alone prove
    # little. The model's input path is checked instead: the encoder ran the same audio items
    # (content hashes), each once, in the same order, and no step lacked its audio embedding.
    # (seen once in CI, not reproduced since: "off" 174 hashes short with equal tokens; the
    # counts and the child's stderr say more than the lists' diff)
    assert off["encoded_mm_hashes"] == on["encoded_mm_hashes"], (
        len(off["encoded_mm_hashes"]), len(on["encoded_mm_hashes"]), off["stderr_tail"][-1200:])
    assert len(off["encoded_mm_hashes"]) >= 150
    assert len(set(off["encoded_mm_hashes"])) == len(off["encoded_mm_hashes"])
    assert off["empty_embedding_warnings"] == on["empty_embedding_warnings"] == 0
    # and the fix did act: nearly every item left the session, which never held more than a
    # hash block's worth (+ the newest)
    assert on["session_fix_dropped"] >= len(on["tokens"]) - 40
    assert on["session_fix_max_left"] <= 16 + 3
    assert off["session_fix_dropped"] == 0


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_carried_tokens_give_the_echo_s_results(growth):
    """Chunks sent ahead with a placeholder the engine core replaces ("carry") give the same
    tokens and the same log-probabilities, step for step, as chunks that wait for the echoed
    token ("on"). The control ("blind": the same placeholders, the carry off) shows the
    comparison can fail: the model then sees the placeholder and other tokens come out (the
    dummy model's log-probabilities hardly vary, its token ids do)."""
    _, runs = growth
    on, carry, blind = runs["on"], runs["carry"], runs["blind"]
    assert (on["feed"], carry["feed"], blind["feed"]) == ("echo", "carry", "carry")
    assert carry["token_carry_applied"] and not on["token_carry_applied"]
    assert not blind["token_carry_applied"]
    assert len(on["tokens"]) >= 140 and carry["tokens"] == on["tokens"]
    assert carry["vs_first"]["variant"] == "on" and carry["vs_first"]["logprob_max_diff"] == 0.0
    assert blind["vs_first"]["tokens_identical"] is False
