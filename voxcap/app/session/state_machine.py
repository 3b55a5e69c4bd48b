"""The captioning states (``events.Captioning``) and which one may follow which.

    OFF -> STARTING -> WAITING (engine not ready; audio held) -> ON (streams open)
    ON | WAITING -> RESTARTING (engine restart; audio held) -> ON
    capturing -> PAUSED (captures stopped, streams flushed) -> WAITING | ON (resume)
    active -> STOPPING (last words flushed) -> OFF;   any -> CLOSED (shut down)

Capturing states and failures (engine failed, no stream opened, last stream ended) go to OFF.
A move the table does not hold is a bug in the controller: it is logged as one, and made all
the same (captioning goes on rather than stopping on a bookkeeping slip).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...events import Captioning, CaptioningState

log = logging.getLogger(__name__)
CAPTURING = tuple(c for c in Captioning if c.capturing)  # audio is being captured
ACTIVE = tuple(c for c in Captioning if c.active)  # a session is open (paused too)

_C = Captioning
TRANSITIONS: dict[Captioning, frozenset[Captioning]] = {
    _C.OFF: frozenset({_C.STARTING, _C.OFF}),  # OFF again: a start refused, with its reason
    _C.STARTING: frozenset({_C.WAITING, _C.ON, _C.PAUSED, _C.STOPPING, _C.OFF}),
    _C.WAITING: frozenset({_C.ON, _C.RESTARTING, _C.PAUSED, _C.STOPPING, _C.OFF}),
    _C.ON: frozenset({_C.RESTARTING, _C.PAUSED, _C.STOPPING, _C.OFF}),
    _C.RESTARTING: frozenset({_C.ON, _C.PAUSED, _C.STOPPING, _C.OFF}),
    _C.PAUSED: frozenset({_C.WAITING, _C.ON, _C.STOPPING, _C.OFF}),
    _C.STOPPING: frozenset({_C.OFF}),
    _C.CLOSED: frozenset(),
}


def legal(old: Captioning, new: Captioning) -> bool:
    return new == Captioning.CLOSED or new in TRANSITIONS[old]


class CaptioningStateMachine:
    """The state now; each move is logged and published as ``CaptioningState``."""

    def __init__(self, emit: Callable[[object], None]) -> None:
        self._emit = emit
        self.state = Captioning.OFF

    @property
    def capturing(self) -> bool:
        return self.state in CAPTURING

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    def move_to(self, state: Captioning, session_id: str, labels: tuple[str, ...],
                message: str = "") -> None:
        if not legal(self.state, state):
            log.error("captioning moved %s -> %s: not a legal transition (a controller bug)",
                      self.state, state)
        self.state = state
        log.info("captioning %s%s", state, f": {message}" if message else "")
        self._emit(CaptioningState(state, session_id, labels, message))
