"""Caption lag, measured: how long after a word was *heard* it is *on screen*.

Definition (what the meter shows as "caption lag"): for each repaint of the overlay that shows
new words, ``painted_at - captured_at(end of the newest word's audio)``, where

- ``painted_at`` is the wall clock (``time.time()``) in the overlay's paint handler, after the
  text was drawn;
- ``captured_at(t)`` is the wall time the sample at stream time ``t`` was captured: the capture
  layer stamps each audio block with the wall time of its first sample (``AudioBlock.captured_at``)
  and ``CaptureClock`` remembers, per engine stream, which stream sample each block started at;
  the word's end is the ``audio_end_s`` of its last delta (the engine's own audio span).

So it is everything a person waits for: the transcription delay the model is set to (480 ms by
default), the engine's step time and any backlog, the word being completed (a word is shown
whole, one 80 ms step after its last piece), the hop into the GUI thread and the paint. Audio
held during an engine restart counts with its real capture time, so the lag after a restart is
honestly large until the engine has caught up.

No Qt here; thread-safe (the capture threads write, the GUI thread reads).
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from ..framing import SAMPLE_RATE

_KEEP_BLOCKS = 30000  # ~10 min of 20 ms blocks per stream


class CaptureClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[str, tuple[list[int], deque]] = {}

    def open(self, stream_id: str) -> None:
        with self._lock:
            self._streams[stream_id] = ([0], deque(maxlen=_KEEP_BLOCKS))

    def forget(self, stream_id: str) -> None:
        with self._lock:
            self._streams.pop(stream_id, None)

    def pushed(self, stream_id: str, n_samples: int, captured_at: float) -> None:
        """A block of ``n_samples`` whose first sample was captured at ``captured_at``."""
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None:
                return
            count, blocks = st
            blocks.append((count[0], captured_at))
            count[0] += n_samples

    def wall_time(self, stream_id: str, audio_s: float) -> float | None:
        """When the stream's sample at ``audio_s`` seconds was captured (None: unknown)."""
        target = int(audio_s * SAMPLE_RATE)
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None or not st[1]:
                return None
            count, blocks = st
            target = min(target, count[0])
            for start, at in reversed(blocks):  # recent audio: a few steps from the end
                if start <= target:
                    return at + (target - start) / SAMPLE_RATE
            return None


class RecentValues:
    """Timestamped values (seconds or ms) of the last ``keep_s`` seconds with percentiles."""

    def __init__(self, keep_s: float = 120.0) -> None:
        self.keep_s = keep_s
        self._lock = threading.Lock()
        self._items: deque[tuple[float, float]] = deque()

    def add(self, value: float, at: float | None = None) -> None:
        at = time.time() if at is None else at
        with self._lock:
            self._items.append((at, value))
            while self._items and at - self._items[0][0] > self.keep_s:
                self._items.popleft()

    def values(self, last_s: float | None = None, now: float | None = None) -> list[float]:
        now = time.time() if now is None else now
        with self._lock:
            items = list(self._items)
        return [v for at, v in items if last_s is None or now - at <= last_s]

    def percentiles(self, last_s: float | None = 10.0, qs=(50, 95),
                    now: float | None = None) -> tuple[float | None, ...]:
        vals = self.values(last_s, now)
        if not vals:
            return tuple(None for _ in qs)
        return tuple(float(x) for x in np.percentile(np.asarray(vals), qs))

    def __len__(self) -> int:
        return len(self._items)
