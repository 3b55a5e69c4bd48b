"""A consumer slower than real time: the bounded queue drops blocks, and only it; every dropped
block is counted and reported in a CaptureLoss event, and the audio that was kept is intact."""

from __future__ import annotations

import time

from support.capture_helpers import Recorder

from voxcap.capture import Capture
from voxcap.events import CaptureLoss, CaptureStopped


def test_slow_consumer_drops_are_counted_and_reported(pulse):
    rec = Recorder(block_delay_s=0.05)  # 50 ms per 20 ms block: 2.5x slower than real time
    cap = Capture("system", rec.on_block, rec.on_event, queue_s=0.2).start()
    time.sleep(3.0)
    stats = cap.stop()
    assert stats.dropped_blocks > 20
    losses = rec.events_of(CaptureLoss, kind="queue full")
    assert losses, rec.events
    assert sum(e.blocks for e in losses) == stats.dropped_blocks
    assert abs(losses[-1].total_seconds - stats.dropped_seconds) < 1e-6
    assert "voxcap fell behind" in losses[-1].message
    # nothing else lost: no gaps against the wall clock, no overflows; kept + dropped = seen
    assert stats.gaps == 0 and stats.overflows == 0
    assert not rec.events_of(CaptureLoss, kind="gap")
    assert abs(stats.seconds_delivered + stats.dropped_seconds - stats.seconds_seen) < 0.05
    assert stats.seconds_seen > 2.5
    assert rec.events_of(CaptureStopped)[0].dropped_blocks == stats.dropped_blocks
