"""Collecting what a ``voxcap.capture.Capture`` delivers, for tests."""

from __future__ import annotations

import threading
import time

import numpy as np


class Recorder:
    """``on_block`` and ``on_event`` for a Capture: keeps every block and event, thread-safe."""

    def __init__(self, block_delay_s: float = 0.0) -> None:
        self.block_delay_s = block_delay_s  # > 0: a consumer slower than real time
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.blocks: list = []
        self.events: list = []
        self.block_times: list[float] = []  # time.time() when each block was delivered

    def on_block(self, block) -> None:
        now = time.time()
        with self._cond:
            self.blocks.append(block)
            self.block_times.append(now)
            self._cond.notify_all()
        if self.block_delay_s:
            time.sleep(self.block_delay_s)

    def on_event(self, event) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def audio(self, since: int = 0) -> np.ndarray:
        with self._lock:
            blocks = self.blocks[since:]
        return np.concatenate([b.samples for b in blocks]) if blocks else np.zeros(0, np.float32)

    def mark(self) -> int:
        """Index of the next block (to look at audio captured after this point)."""
        with self._lock:
            return len(self.blocks)

    def events_of(self, cls, **fields) -> list:
        with self._lock:
            return [e for e in self.events if isinstance(e, cls)
                    and all(getattr(e, k) == v for k, v in fields.items())]

    def wait_event(self, cls, timeout: float = 10.0, **fields):
        """The first event of class ``cls`` (matching ``fields``); raises AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [e for e in self.events if isinstance(e, cls)
                         and all(getattr(e, k) == v for k, v in fields.items())]
                if found:
                    return found[0]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {cls.__name__} {fields} within {timeout} s; events: "
                                         + "; ".join(getattr(e, "message", repr(e)) for e in self.events))
                self._cond.wait(remaining)

    def wait_audio(self, seconds: float, since: int = 0, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.audio(since).size < seconds * 16000:
            if time.monotonic() > deadline:
                raise AssertionError(f"less than {seconds} s of audio within {timeout} s")
            time.sleep(0.05)


def wait_until(cond, timeout: float = 10.0) -> bool:
    """Whether ``cond()`` came true within ``timeout`` seconds (looked at every 50 ms)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
