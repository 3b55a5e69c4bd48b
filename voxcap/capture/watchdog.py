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
    first callback, ``rate`` frames must arrive per second. A shortfall is only a loss if it
    stays: a callback that runs late (this process or the server starved for a moment) is
    followed by a burst of the buffered blocks that makes up for it. So a shortfall above
    ``threshold_s`` that is still there ``settle_s`` later is counted (its smallest value over
    that time), once: the baseline then restarts. Arriving ahead of the clock (start-up bursts,
    jitter) moves the baseline up, so jitter alone never adds up; and the baseline restarts every
    ``rebase_s`` so that a device clock slightly slower than the system's (tens of ppm: a few ms
    a minute) never adds up to a false gap either. (The price: a steady loss of under
    ``threshold_s`` per ``rebase_s`` goes unnoticed.)
    """

    def __init__(self, rate: int, threshold_s: float = 0.1, settle_s: float = 0.5,
                 rebase_s: float = 60.0) -> None:
        self.rate = rate
        self.threshold = threshold_s * rate
        self.settle_s = settle_s
        self.rebase_s = rebase_s
        self._t0: float | None = None
        self._f0 = 0
        self._since: float | None = None  # when the current shortfall began
        self._min_lag = 0.0

    def reset(self) -> None:
        self._t0 = None
        self._since = None

    def update(self, at: float, frames_total: int) -> float:
        """Feed the callback time (monotonic) and running frame count; returns seconds of audio
        found missing now (0.0 almost always)."""
        if self._t0 is None:
            self._t0, self._f0 = at, frames_total
            return 0.0
        lag = (at - self._t0) * self.rate - (frames_total - self._f0)
        if lag < 0:
            self._t0, self._f0, self._since = at, frames_total, None
            return 0.0
        if self._since is None:
            if lag > self.threshold:
                self._since, self._min_lag = at, lag
            elif at - self._t0 > self.rebase_s:
                self._t0, self._f0 = at, frames_total
            return 0.0
        self._min_lag = min(self._min_lag, lag)
        if self._min_lag <= self.threshold:  # the late blocks came after all
            self._since = None
            return 0.0
        if at - self._since < self.settle_s:
            return 0.0
        lost = self._min_lag / self.rate
        self._t0, self._f0, self._since = at, frames_total, None
        return lost


def health(alive: bool, callbacks: int, silent_for: float, stall_s: float,
           first_data_s: float) -> str:
    """Why a stream needs reopening ("stream finished", "stalled"), or "" if it is healthy."""
    if not alive:
        return "stream finished"
    if silent_for > (stall_s if callbacks else first_data_s):
        return "stalled"
    return ""
