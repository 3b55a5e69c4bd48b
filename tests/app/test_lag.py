"""Caption-lag bookkeeping (``app.lag``) alone: capture clock and percentile windows."""

from __future__ import annotations

import pytest

from voxcap.app.lag import CaptureClock, RecentValues


def test_capture_clock_maps_stream_time_to_capture_time():
    clock = CaptureClock()
    clock.open("s1")
    clock.pushed("s1", 320, 1000.0)
    clock.pushed("s1", 320, 1000.02)
    clock.pushed("s1", 320, 1005.0)  # a capture gap: the next block came 5 s later
    assert clock.wall_time("s1", 0.0) == pytest.approx(1000.0)
    assert clock.wall_time("s1", 0.01) == pytest.approx(1000.01)
    assert clock.wall_time("s1", 0.04) == pytest.approx(1005.0)
    assert clock.wall_time("s1", 9.0) == pytest.approx(1005.02)  # clamped to what was pushed
    assert clock.wall_time("s2", 0.0) is None
    clock.forget("s1")
    assert clock.wall_time("s1", 0.0) is None


def test_window_percentiles_and_expiry():
    w = RecentValues(keep_s=10.0)
    for i in range(100):
        w.add(float(i), at=1000.0 + i * 0.05)
    p50, p95 = w.percentiles(last_s=None, now=1005.0)
    assert p50 == pytest.approx(49.5) and p95 == pytest.approx(94.05)
    assert w.values(last_s=1.0, now=1005.0) == [float(i) for i in range(80, 100)]
    w.add(7.0, at=1020.0)  # older than keep_s drops out
    assert w.values(last_s=None, now=1020.0) == [7.0]
    assert RecentValues().percentiles(now=0.0) == (None, None)
