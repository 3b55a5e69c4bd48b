"""The flush policy, one for stopping, pausing and restarting: the open streams are closed
(the engine flushes their delayed last words) and waited for as long as the engine keeps
producing; after ``timeout_s`` without any progress, or at once on ``abort()`` (a second
Ctrl-C), the streams still open are aborted, and that is reported."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ...events import AppProblem

log = logging.getLogger(__name__)
FLUSH_TIMEOUT_S = 30.0  # without any progress from the engine


class StreamFlush:
    def __init__(self, emit: Callable[[object], None], timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        self._emit = emit
        self.timeout_s = timeout_s
        self._progress_at = time.monotonic()  # the engine's last sign of life
        self._abort = threading.Event()

    def progress(self) -> None:
        """The engine produced something (a delta, a finished stream): on its thread."""
        self._progress_at = time.monotonic()

    def abort(self) -> None:
        """Give up on the words being flushed now (any thread)."""
        self._abort.set()

    def rearm(self) -> None:
        """A new start or resume: an earlier ``abort()`` no longer counts."""
        self._abort.clear()

    def flush(self, eng, stream_ids: list[str]) -> None:
        if eng is None:
            return
        for sid in stream_ids:
            eng.close_stream(sid)  # never raises: a stopped engine's streams are done
        self._progress_at = time.monotonic()
        pending = list(stream_ids)
        while pending:
            if eng.wait_stream(pending[0], 0.1):
                pending.pop(0)
                continue
            stalled = time.monotonic() - self._progress_at > self.timeout_s
            if stalled or self._abort.is_set():
                self._give_up(eng, pending, stalled)
                return

    def _give_up(self, eng, pending: list[str], stalled: bool) -> None:
        why = ("given up on request" if not stalled else
               f"the engine produced nothing for {self.timeout_s:g} s")
        log.warning("flush of %s aborted: %s", pending, why)
        self._emit(AppProblem(f"The last words were not all captioned: {why}.",
                              "" if not stalled else "see the log; restart the engine "
                              "if it persists", "engine"))
        for sid in pending:
            eng.abort_stream(sid)
        for sid in pending:
            eng.wait_stream(sid, 5.0)
