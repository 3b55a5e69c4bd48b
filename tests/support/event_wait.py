"""Waiting for published events in tests: ``Events`` is a queue that remembers everything."""

from __future__ import annotations

import queue
import time


class Events(queue.Queue):
    """Everything published; ``wait`` looks at what was not yet waited past."""

    def __init__(self) -> None:
        super().__init__()
        self.all: list = []
        self.pos = 0

    def _wait(self, pred, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            while self.pos < len(self.all):
                ev = self.all[self.pos]
                self.pos += 1
                if pred(ev):
                    return ev, self.all[:self.pos]
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen; got {[type(e).__name__ for e in self.all]}")
            try:
                self.all.append(self.get(timeout=0.05))
            except queue.Empty:
                pass


def wait_for(q, pred, timeout=10.0):
    return q._wait(pred, timeout)
