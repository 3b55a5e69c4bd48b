"""The per-chunk benchmark of the engine core's request work (benchmarks/engine_core_chunk.py)
measures what it says: its chunk is what vLLM's realtime path sends (it survives vLLM's own
msgpack round trip as one resumable greedy one-token request with one 2,160-sample audio item),
and the session update it times is vLLM's scheduler growing the session by one token a chunk.
No engine; no speed is asserted."""

from __future__ import annotations

import torch

from benchmarks.engine_core_chunk import STEADY, chunk_request, measure


def test_the_chunk_is_a_realtime_chunk_after_vllms_round_trip():
    from vllm.v1.engine import EngineCoreRequest
    from vllm.v1.serial_utils import MsgpackDecoder, MsgpackEncoder

    sent = chunk_request()
    got = MsgpackDecoder(EngineCoreRequest).decode(
        [bytes(f) for f in MsgpackEncoder().encode(sent)])
    assert got.resumable and got.prompt_token_ids == [32]
    assert got.sampling_params.max_tokens == 1 and got.sampling_params.temperature == 0.0
    (feature,) = got.mm_features
    audio = feature.data["audio_arrays"].data
    assert audio.dtype == torch.float32 and audio.shape == (STEADY,)
    assert torch.equal(audio, sent.mm_features[0].data["audio_arrays"].data)


def test_every_stage_is_timed():
    figures = measure(calls=20, tokens=50)
    assert set(figures) == {"decode", "decode: no audio", "decode: tensor", "request",
                            "session update", "new request data"}
    assert all(us > 0 for us in figures.values())
    assert figures["decode"] > figures["decode: no audio"]
