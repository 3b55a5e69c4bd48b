"""Small pieces of the capture watchdog that need no sound: retry backoff, gap detection by
counting frames against the wall clock, and the health verdict on a stream."""

from __future__ import annotations


class Backoff:
    """Delays between reopen attempts: ``first``, doubling, at most ``cap`` seconds (kept short:
    while it waits, nothing is captioned)."""

    def __init__(self, first: float = 0.1, cap: float = 1.0) -> None:
        self.first, self.cap = first, cap
        self._next = first

    def next_delay(self) -> float:
        d = self._next
        self._next = min(self.cap, self._next * 2)
        return d

    def reset(self) -> None:
        self._next = self.first


class GapMeter:
    """Frames delivered against the wall clock, for one opening of a stream.

    PortAudio reports no overflow and no timestamp gap when audio is lost upstream (a callback
    slower than real time, a starved sound server), so the only witness is the clock: after the
    first callback, ``rate`` frames must arrive per second. A shortfall above ``threshold_s`` is
    a gap; the baseline then restarts at that point so each loss is counted once. Arriving ahead
    of the clock (start-up bursts, jitter) moves the baseline up, so jitter alone never adds up.
    """

    def __init__(self, rate: int, threshold_s: float = 0.25) -> None:
        self.rate = rate
        self.threshold = threshold_s * rate
        self._t0: float | None = None
        self._f0 = 0

    def reset(self) -> None:
        self._t0 = None

    def update(self, at: float, frames_total: int) -> float:
        """Feed the callback time (monotonic) and running frame count; returns seconds of audio
        found missing now (0.0 almost always)."""
        if self._t0 is None:
            self._t0, self._f0 = at, frames_total
            return 0.0
        lag = (at - self._t0) * self.rate - (frames_total - self._f0)
        if lag < 0:
            self._t0, self._f0 = at, frames_total
            return 0.0
        if lag > self.threshold:
            self._t0, self._f0 = at, frames_total
            return lag / self.rate
        return 0.0


def health(alive: bool, callbacks: int, silent_for: float, stall_s: float,
           first_data_s: float) -> str:
    """Why a stream needs reopening ("stream finished", "stalled"), or "" if it is healthy."""
    if not alive:
        return "stream finished"
    if silent_for > (stall_s if callbacks else first_data_s):
        return "stalled"
    return ""
