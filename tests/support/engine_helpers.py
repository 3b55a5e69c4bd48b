"""Helpers for tests that drive the real engine."""

from __future__ import annotations

import queue
import time

from voxcap.events import StreamFinished, TextDelta


def collect_stream(events: queue.Queue, stream_id: str, timeout: float = 120.0):
    """Deltas of ``stream_id`` until its StreamFinished; returns (deltas, finished)."""
    return collect_streams(events, [stream_id], timeout)[stream_id]


def collect_streams(events: queue.Queue, stream_ids, timeout: float = 120.0):
    """Like collect_stream for several streams at once: {id: (deltas, finished)}."""
    pending = set(stream_ids)
    deltas = {sid: [] for sid in stream_ids}
    done = {}
    deadline = time.monotonic() + timeout
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"streams {sorted(pending)} did not finish in {timeout} s")
        try:
            ev = events.get(timeout=remaining)
        except queue.Empty:
            continue
        if isinstance(ev, TextDelta) and ev.stream_id in deltas:
            deltas[ev.stream_id].append(ev)
        elif isinstance(ev, StreamFinished) and ev.stream_id in pending:
            done[ev.stream_id] = ev
            pending.discard(ev.stream_id)
    return {sid: (deltas[sid], done[sid]) for sid in stream_ids}
