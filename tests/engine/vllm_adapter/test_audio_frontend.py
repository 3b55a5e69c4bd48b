"""voxcap's batched audio front end (voxcap/engine/vllm_adapter/audio_frontend.py): one mel
spectrogram and one conv pass for a step's chunks gives vLLM's per-session tensors, bitwise,
and the session engine runs it.

The tensor tests run vLLM's own front-end code (``VoxtralEncoderModel.compute_whisper_melspec``,
``WhisperCausalConv1d``, ``VoxtralRealtimeGeneration.embed_multimodal``) on the front end's
modules alone, built without the rest of the model (its attention layers need an engine); the
engine test asks the session engine's worker what ran.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from voxcap.engine.vllm_adapter import audio_frontend

STEADY = 2160  # samples of every realtime chunk after a session's first (tiny model's config)
FIRST = 49_960  # a session's first chunk (the prompt prefix's audio)


def front_end(dtype_name: str = "float32", d_model: int = 64, global_max: float | None = 1.5):
    """vLLM's Voxtral Realtime model holding only what embed_multimodal uses: the mel filters,
    the two causal convolutions (random weights, seed 0) and the pool size."""
    import torch
    from mistral_common.audio import mel_filter_bank
    from torch import nn
    from vllm.model_executor.models.voxtral import VoxtralEncoderModel
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeGeneration
    from vllm.model_executor.models.whisper_causal import WhisperCausalConv1d, WhisperCausalEncoder

    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)

    def bare(cls):
        obj = nn.Module.__new__(cls)
        nn.Module.__init__(obj)
        return obj

    conv = bare(WhisperCausalEncoder)
    conv.conv1 = WhisperCausalConv1d(128, d_model, kernel_size=3).to(dtype)
    conv.conv2 = WhisperCausalConv1d(d_model, d_model, stride=2, kernel_size=3).to(dtype)
    conv.total_stride = 2
    enc = bare(VoxtralEncoderModel)
    enc.config = SimpleNamespace(window_size=400, hop_length=160, global_log_mel_max=global_max)
    enc.dtype = dtype
    enc.whisper_encoder = conv
    enc.register_buffer("mel_filters", torch.tensor(mel_filter_bank(
        num_frequency_bins=201, num_mel_bins=128, min_frequency=0.0, max_frequency=8000.0,
        sampling_rate=16000), dtype=torch.float32), persistent=False)
    model = bare(VoxtralRealtimeGeneration)
    model.whisper_encoder = enc
    model.config = SimpleNamespace(audio_config=SimpleNamespace(block_pool_size=4))
    return model


def vllm_embed(model, audio):
    """vLLM 0.32.0's own embed_multimodal (unwrapped if the plugin wrapped it here)."""
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeGeneration

    method = VoxtralRealtimeGeneration.embed_multimodal
    return getattr(method, "__wrapped__", method)(model, audio_arrays=audio)


def sessions(n: int, dtype_name: str, length: int = STEADY, seed: int = 1):
    """Each session's next chunk: different voices and levels, as sessions at different points
    of different speech (a silent one among them)."""
    import torch

    rng = np.random.default_rng(seed)
    t = np.arange(length) / 16000
    out = []
    for k in range(n):
        tone = np.sin(2 * np.pi * (110 + 37 * k) * t) * (0.05 + 0.1 * k % 0.8)
        out.append(tone + rng.normal(0, 0.02 * (k % 3), length) if k % 5 != 4 else 0 * t)
    return torch.tensor(np.stack(out), dtype=getattr(torch, dtype_name))


@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 17, 64])
def test_batched_pass_is_vllms_per_session_tensors(dtype_name, n):
    import torch

    model = front_end(dtype_name)
    audio = sessions(n, dtype_name)
    with torch.inference_mode():
        want = vllm_embed(model, audio)
        got = audio_frontend.batched_frontend(model, audio)
    assert got.shape[0] == n and len(want) == n
    for k in range(n):
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape == (1, 4 * 64)
        assert torch.equal(got[k], want[k]), (k, (got[k] - want[k]).abs().max())


def test_a_step_with_first_chunks_and_odd_lengths_keeps_its_order():
    """First chunks (long) and items of other lengths take vLLM's path; each item's embedding
    comes back in its place, equal to vLLM's."""
    import torch

    model = front_end()
    steady = sessions(4, "float32")
    items = [steady[0], sessions(1, "float32", FIRST, seed=2)[0], steady[1],
             sessions(1, "float32", 3000, seed=3)[0], steady[2], steady[3]]
    before = audio_frontend.frontend_counts()
    with torch.inference_mode():
        want = vllm_embed(model, items)
        got = audio_frontend.embed_batched(
            model, lambda m, **kw: vllm_embed(m, kw["audio_arrays"]), {"audio_arrays": items})
    after = audio_frontend.frontend_counts()
    assert [g.shape for g in got] == [w.shape for w in want]
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    assert after["per_session_items"] - before["per_session_items"] == 1  # the first chunk
    assert after["batched_items"] - before["batched_items"] == 5
    assert after["batched_passes"] - before["batched_passes"] == 2  # 4 of 2,160, 1 of 3,000


def test_without_a_global_mel_maximum_vllms_path_runs():
    """Each spectrogram then clamps against its own maximum: one batched call would share it."""
    import torch

    model = front_end(global_max=None)
    audio = sessions(3, "float32")
    before = audio_frontend.frontend_counts()["per_session_items"]
    with torch.inference_mode():
        got = audio_frontend.embed_batched(
            model, lambda m, **kw: vllm_embed(m, kw["audio_arrays"]), {"audio_arrays": audio})
        want = vllm_embed(model, audio)
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    assert audio_frontend.frontend_counts()["per_session_items"] - before == 3


def test_flag_off_by_default(monkeypatch):
    monkeypatch.delenv(audio_frontend.FRONTEND_ENV, raising=False)
    assert not audio_frontend.enabled()
    monkeypatch.setenv(audio_frontend.FRONTEND_ENV, "1")
    assert audio_frontend.enabled()


def test_real_model_width():
    """The real model's convolution width (1,280 channels): each item's input stays under the
    size where PyTorch's batch-1 convolution leaves its native kernel."""
    import torch

    model = front_end(d_model=1280)
    audio = sessions(5, "float32")
    with torch.inference_mode():
        want = vllm_embed(model, audio)
        got = audio_frontend.batched_frontend(model, audio)
    assert all(torch.equal(got[k], want[k]) for k in range(5))


def worker_counts(engine) -> dict:
    """The front end's counts in the session engine's worker (its engine core on the CPU build),
    through vLLM's collective_rpc: a worker without the front end has no such method."""
    import asyncio

    (counts,) = asyncio.run_coroutine_threadsafe(
        engine._engine.collective_rpc(audio_frontend.COUNTS_RPC), engine._loop).result(60)
    return counts


@pytest.mark.engine
def test_the_session_engine_batches_its_streams_chunks(engine, engine_events, parity_audio,
                                                        reference):
    """Three streams at once, each at another point of other speech: steps carry several
    sessions' chunks in one front-end pass, and each stream gets vLLM's own tokens (vLLM's
    per-session path, support/reference_tokens.py) as if it had run alone."""
    import threading

    from support.engine_helpers import collect_streams

    names = ["speech", "other", "speech_shift20"]
    before = worker_counts(engine)
    sids = [engine.open_stream(name) for name in names]
    barrier = threading.Barrier(len(sids))

    def feed(sid, audio):
        barrier.wait()
        for i in range(0, audio.size, 1280):
            engine.push_audio(sid, audio[i:i + 1280])
        engine.close_stream(sid)

    threads = [threading.Thread(target=feed, args=(sid, parity_audio[name]))
               for sid, name in zip(sids, names, strict=True)]
    for t in threads:
        t.start()
    got = collect_streams(engine_events, sids, timeout=300)
    for t in threads:
        t.join()
    after = worker_counts(engine)
    for sid, name in zip(sids, names, strict=True):
        assert [t for d in got[sid][0] for t in d.token_ids] == reference[name], name
    batched = after["batched_items"] - before["batched_items"]
    passes = after["batched_passes"] - before["batched_passes"]
    assert after["per_session_items"] - before["per_session_items"] == 3  # the first chunks
    # every chunk after each stream's first: the first (the prompt prefix's audio) and the
    # flush give ~20 tokens each
    assert batched >= 0.6 * sum(len(reference[n]) for n in names), batched
    assert passes < 0.8 * batched, (passes, batched)  # most passes carried several sessions
