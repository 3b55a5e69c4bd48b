"""voxcap's realtime-input fix (engine/vllm_adapter/realtime_input.py): a realtime chunk's
multimodal input, built by the feature extractor directly, is exactly what vLLM 0.32's generic
HF processor call builds. vLLM's own processor for the tiny model (no engine), real chunk sizes
(the first chunk of a session, then 80 ms ones), fix off and on."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from voxcap.engine.server.process import child_env
from voxcap.engine.vllm_adapter import realtime_input

# (samples, prompt ids): the first chunk (39 prompt tokens x 1,280 + 40 look-ahead), then steps
# of 840 look-back + 1,280 + 40 look-ahead with the one token echoed
CHUNKS = [(49_960, list(range(1, 40))), (2_160, [33]), (2_160, [191]), (2_160, [33])]


@pytest.fixture(scope="module", params=["float32", "bfloat16"])
def processor(request, tiny_model_dir):
    from vllm.config import ModelConfig
    from vllm.multimodal import MULTIMODAL_REGISTRY

    config = ModelConfig(model=str(tiny_model_dir), tokenizer=str(tiny_model_dir),
                         tokenizer_mode="mistral", config_format="mistral", max_model_len=4096,
                         dtype=request.param)
    return MULTIMODAL_REGISTRY.create_processor(config)


@pytest.fixture
def patched():
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeMultiModalProcessor as P

    before = P._apply_hf_processor_main
    assert realtime_input.apply()
    assert realtime_input.applied() and P._apply_hf_processor_main is not before
    assert realtime_input.apply()  # a second load changes nothing
    yield before
    P._apply_hf_processor_main = before  # the generic path for the rest of this process


def _apply(processor, samples, ids, seed, uuids=None):
    from vllm.multimodal.processing import ProcessorInputs, TimingContext

    audio = (np.random.default_rng(seed).standard_normal(samples) * 0.1).astype(np.float32)
    items = processor.info.parse_mm_data({"audio": (audio, None)})
    return processor.apply(ProcessorInputs(prompt=list(ids), mm_data_items=items,
                                           mm_uuid_items=uuids), TimingContext())


def _same(a, b) -> None:
    assert a["prompt_token_ids"] == b["prompt_token_ids"]
    assert a["mm_hashes"] == b["mm_hashes"]
    assert a["mm_placeholders"] == b["mm_placeholders"]
    ka, kb = a["mm_kwargs"].require_data(), b["mm_kwargs"].require_data()
    assert ka.keys() == kb.keys()
    for modality in ka:
        assert len(ka[modality]) == len(kb[modality]) == 1
        for ia, ib in zip(ka[modality], kb[modality], strict=True):
            assert ia.keys() == ib.keys()
            for key in ia:
                ea, eb = ia[key], ib[key]
                assert ea.field == eb.field
                assert isinstance(ea.data, torch.Tensor) and isinstance(eb.data, torch.Tensor)
                assert ea.data.dtype == eb.data.dtype and ea.data.shape == eb.data.shape
                assert torch.equal(ea.data, eb.data)


def test_direct_input_is_the_generic_one(processor, patched):
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeMultiModalProcessor as P

    dtype = processor.info.ctx.model_config.dtype
    for k, (samples, ids) in enumerate(CHUNKS):
        for uuids in (None, {"audio": [f"req-audio-{k}"]}):  # prefix caching on / off
            P._apply_hf_processor_main = patched
            generic = _apply(processor, samples, ids, seed=k, uuids=uuids)
            realtime_input.apply()
            direct = _apply(processor, samples, ids, seed=k, uuids=uuids)
            _same(generic, direct)
            (item,) = direct["mm_kwargs"].require_data()["audio"]
            assert item["audio_arrays"].data.dtype == dtype  # the model's dtype, as vLLM casts
            assert item["audio_arrays"].data.shape == (samples,)


def test_the_direct_path_is_taken_and_leaves_other_inputs_alone(processor, patched, monkeypatch):
    calls = []  # vLLM's own call still runs: this only counts it
    context = type(processor.info.ctx)
    original = context.call_hf_processor
    monkeypatch.setattr(context, "call_hf_processor",
                        lambda *a, **kw: calls.append(1) or original(*a, **kw))
    _apply(processor, *CHUNKS[1], seed=1)
    assert calls == []  # the generic HF call skipped
    from vllm.multimodal.processing import ProcessorInputs, TimingContext

    audio = np.zeros(2_160, np.float32)
    items = processor.info.parse_mm_data({"audio": (audio, None)})
    processor.apply(ProcessorInputs(prompt=[33], mm_data_items=items,
                                    hf_processor_mm_kwargs={"truncation": True}), TimingContext())
    assert calls == [1]  # a request's own processor kwargs take vLLM's path


def test_voxcap_serve_turns_it_on_unless_told_not_to(monkeypatch):
    monkeypatch.delenv(realtime_input.REALTIME_INPUT_ENV, raising=False)
    assert child_env({})[realtime_input.REALTIME_INPUT_ENV] == "1"
    monkeypatch.setenv(realtime_input.REALTIME_INPUT_ENV, "0")
    assert child_env({})[realtime_input.REALTIME_INPUT_ENV] == "0"
