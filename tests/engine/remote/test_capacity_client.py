"""The capacity benchmark's realtime client (benchmarks/lib/realtime_client.py) against a real
``voxcap serve`` (vLLM's server, CPU build, the tiny model's weight files: support/shared_serve.py's
server): two paced sessions
of a few seconds. What it checks is that the client speaks vLLM's protocol and times what it
says it times; no speed is asserted (the benchmark measures that)."""

from __future__ import annotations

import asyncio

import pytest
from support.framing import FIRST_STEP_SAMPLES, SAMPLE_RATE, STEP_SAMPLES, expected_tokens

from benchmarks.capacity import speech
from benchmarks.lib.realtime_client import run_sessions
from voxcap.framing import first_step_samples

pytestmark = [pytest.mark.engine, pytest.mark.slow]

SECONDS = 3.2


@pytest.fixture(scope="module")
def server(shared_serve):
    return shared_serve


def run(server, n, model=None, key=None, seconds=SECONDS):
    audio = speech(seconds)
    return audio, asyncio.run(run_sessions(
        server.url + "/v1/realtime", model or server.served_name, key or server.api_key, audio, n,
        spread_s=0.5, drain_s=30.0, first_step=first_step_samples(480)))


def test_two_paced_sessions_each_step_timed_once(server):
    audio, results = run(server, 2)
    assert len(audio) == int(SECONDS * SAMPLE_RATE) // STEP_SAMPLES * STEP_SAMPLES
    timed = 1 + (len(audio) - FIRST_STEP_SAMPLES) // STEP_SAMPLES
    for r in results:
        assert r.error is None, r.error
        assert r.done, "no transcription.done"
        # one delta per decoding step: the timed ones, then the flush after the final commit
        assert len(r.deltas) == expected_tokens(len(audio)), (len(r.deltas), len(audio))
        assert r.timed_steps == timed
        assert len(r.rtt_ms) == timed
        assert all(x > 0 for x in r.rtt_ms)
        # step k's clock started when the block holding its last sample (9,000 + 1,280 k) went
        assert len(r.clocks) == timed and len(r.block_sent) == len(audio) // STEP_SAMPLES
        for k, clock in enumerate(r.clocks):
            last_block = (FIRST_STEP_SAMPLES + k * STEP_SAMPLES - 1) // STEP_SAMPLES
            assert clock == r.block_sent[last_block], k
        # paced: the session took at least its audio's length, so the blocks were not rushed
        assert len(r.send_late_ms) < len(audio) // STEP_SAMPLES
    assert any(r.text.strip() for r in results), "the tiny model's weights give words"
    # session 1's audio is session 0's shifted: the client does not mix sessions up
    assert same_words(results[0], results[1]) < 0.5
    # the same session index gets the same audio, and the server the same words, every time;
    # not always every one: float32 batches of another size on the CPU can flip a near tie of
    # the tiny random model (seen: 1 word of 48)
    _, again = run(server, 2)
    for a, b in zip(again, results, strict=True):
        assert same_words(a, b) >= 0.9, (a.text, b.text)
    assert not any(r.behind(10_000) for r in results)


def same_words(a, b) -> float:
    """The share of positions where the two sessions' deltas are the same."""
    n = max(len(a.deltas), len(b.deltas))
    return sum(x == y for x, y in zip(a.deltas, b.deltas, strict=False)) / n if n else 1.0


def test_a_refused_session_is_an_error_not_a_timing(server):
    _, (wrong_model,) = run(server, 1, model="no-such-model", seconds=1.0)
    assert wrong_model.error and "model" in wrong_model.error
    assert not wrong_model.done and wrong_model.behind(10_000)
    _, (wrong_key,) = run(server, 1, key="not-the-key", seconds=1.0)
    assert wrong_key.error and ("401" in wrong_key.error or "403" in wrong_key.error), \
        wrong_key.error
    assert wrong_key.rtt_ms == []
