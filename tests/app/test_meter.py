"""The meter's figures (``app.meter``) from real engine stats and lag windows; no engine runs:
the stats are fed the calls an engine makes."""

from __future__ import annotations

import time

import pytest

from voxcap.app.lag import RecentValues
from voxcap.app.meter import MeterSampler
from voxcap.engine.stats import EngineStats
from voxcap.events import EngineReady


class Controller:
    """What the sampler reads from the session controller."""

    def __init__(self, stats: EngineStats | None, ready: EngineReady | None) -> None:
        self._stats, self.ready_info = stats, ready

    def stats(self):
        return self._stats.snapshot() if self._stats else None

    def dropped_audio_s(self) -> float:
        return 1.5

    def held_audio_s(self) -> float:
        return 0.25


def test_without_an_engine_every_engine_figure_is_missing():
    r = MeterSampler(Controller(None, None), RecentValues(), RecentValues(), read_gpu=lambda: None).sample()
    assert not r.engine_ready and r.tokens_per_s is None and r.step_p50_ms is None
    assert r.streams == 0 and r.dropped_s == 1.5 and r.held_s == 0.25


def test_figures_come_from_the_measurements():
    stats = EngineStats()
    stats.open("s1", 9000, 1280)
    stats.audio_in("s1", 9000 + 1280 * 10)
    for _ in range(11):
        stats.prompt_sent("s1")
        time.sleep(0.002)
        stats.token_back("s1", 1)
    for _ in range(4):
        stats.engine_step("FULL")  # str(CUDAGraphMode.FULL)
    stats.engine_step("NONE")
    ready = EngineReady("FULL_DECODE_ONLY", "FULL_DECODE_ONLY", (1, 2), 1.0, "cpu", 480, 4096, 1)
    lag, paint = RecentValues(), RecentValues()
    for v in (0.5, 0.7, 0.9):
        lag.add(v)
        paint.add(v / 100)
    s = MeterSampler(Controller(stats, ready), lag, paint, read_gpu=lambda: None)
    r = s.sample()
    assert r.engine_ready and r.resolved_mode == "FULL_DECODE_ONLY"
    assert r.full_share == pytest.approx(0.8) and r.steps == 5
    assert r.step_p50_ms is not None and r.step_p50_ms >= 2.0
    assert r.lag_p50_s == pytest.approx(0.7) and r.paint_p50_ms == pytest.approx(7.0)
    assert r.streams == 1
    assert s.series("lag_p50_s") == [(r.at, pytest.approx(0.7))]


def test_a_prompt_sent_ahead_counts_from_the_previous_token():
    """With token carry a chunk leaves before the previous token is back and waits its turn in
    the engine: its step starts when that token came back, not when it was sent (else a
    pipeline two deep would read as steps twice as long). Each step is checked against the
    test's own clock readings around the calls, so a loaded machine's pauses move both sides."""
    clock = time.perf_counter
    stats = EngineStats()
    stats.open("s1", 9000, 1280)
    sent_before = clock()
    for _ in range(3):
        stats.prompt_sent("s1")  # three chunks in flight at once
    sent_after = clock()
    time.sleep(0.03)
    marks = []  # (just before token_back, its step, just after)
    for k in range(3):
        if k:
            time.sleep(0.005)
        before = clock()
        step = stats.token_back("s1", 1)
        marks.append((before, step, clock()))
    # the first: from its send, nothing before it
    assert (marks[0][0] - sent_after) * 1000 <= marks[0][1] <= (marks[0][2] - sent_before) * 1000
    for (prev_before, _, prev_after), (before, step, after) in zip(marks, marks[1:], strict=False):
        # from the previous token back: between the two calls' readings...
        assert (before - prev_after) * 1000 <= step <= (after - prev_before) * 1000, marks
        # ...and so shorter than the time since its own send
        assert step < (before - sent_after) * 1000
    time.sleep(0.02)  # the engine idles; a prompt sent now starts its own step
    last_back = marks[-1][2]
    sent_before = clock()
    stats.prompt_sent("s1")
    sent_after = clock()
    time.sleep(0.004)
    before = clock()
    step = stats.token_back("s1", 1)
    after = clock()
    # from its send, not from the previous token (which came back 20 ms before the send)
    assert (before - sent_after) * 1000 <= step <= (after - sent_before) * 1000
    assert step < (before - last_back) * 1000
