"""Fan-out of events to several consumers (captions, journal, meter, UI), thread-safe.

The engine calls ``publish`` on its own thread; each subscriber gets its own queue (or
callback), so a slow consumer never blocks the engine or the others.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class EventHub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[object], None]] = []

    def publish(self, event: object) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for deliver in subscribers:
            try:
                deliver(event)
            except Exception:  # one broken consumer must not starve the others
                log.exception("an event consumer failed on %s", type(event).__name__)

    def subscribe(self, callback: Callable[[object], None] | None = None) -> queue.Queue | None:
        """Register ``callback``, or return a new unbounded queue that receives every event."""
        q: queue.Queue | None = None
        if callback is None:
            q = queue.Queue()
            callback = q.put
        with self._lock:
            self._subscribers.append(callback)
        if q is not None:
            q.voxcap_callback = callback  # so unsubscribe(q) works
        return q

    def unsubscribe(self, subscriber) -> None:
        callback = getattr(subscriber, "voxcap_callback", subscriber)
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)
