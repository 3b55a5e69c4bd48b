"""Fan-out of events to several consumers (captions, journal, meter, UI), thread-safe.

The engine calls ``publish`` on its own thread; each subscriber gets its own queue (or
callback), so a slow consumer never blocks the engine or the others.

A state that an event announces once (captioning on or off) would be unknown to an output that
subscribes later (sharing switched on mid-session): the event types in ``keep_latest`` are
remembered, and a new subscriber gets the latest of each first, before anything newer.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class EventHub:
    def __init__(self, keep_latest: tuple[type, ...] = ()) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[object], None]] = []
        self._keep = keep_latest
        self._latest: dict[type, object] = {}

    def publish(self, event: object) -> None:
        with self._lock:
            if isinstance(event, self._keep):
                self._latest[type(event)] = event
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
        with self._lock:  # held while the latest states are handed over: nothing newer overtakes
            self._subscribers.append(callback)
            for event in self._latest.values():
                try:
                    callback(event)
                except Exception:
                    log.exception("an event consumer failed on %s", type(event).__name__)
        return q

    def unsubscribe(self, subscriber) -> None:
        # a queue's callback is its put (bound methods of one queue compare equal)
        callback = subscriber.put if isinstance(subscriber, queue.Queue) else subscriber
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)
