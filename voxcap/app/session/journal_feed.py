"""The journal of the session, fed on its own thread (never the engine's): the engine's deltas,
finished streams and rollovers are queued for the journal open when they came, and a journal is
closed only after everything queued for it was written."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from ...captions.journal import Journal, engine_session_settings
from ...events import AppProblem, LineTranslated, SessionRolled, StreamFinished, TextDelta

log = logging.getLogger(__name__)
JOURNALLED = (TextDelta, StreamFinished, SessionRolled, LineTranslated)
CLOSE_WAIT_S = 30.0


class JournalFeed:
    def __init__(self, emit: Callable[[object], None], root=None, enabled: bool = True) -> None:
        self._emit = emit
        self._root = root
        self.enabled = enabled
        self._journal: Journal | None = None
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True, name="voxcap-journal-feed")
        self._thread.start()

    def open(self, engine_settings, ready_info, sources: dict[str, str], kind: str) -> str:
        """A new session's journal (the open one closed first): the engine's settings, and the
        sources (label -> device or file) in its title; its id, "" when journalling is off."""
        self.close()
        if not self.enabled:
            return ""
        settings = engine_session_settings(engine_settings, ready_info, sources)
        title = " + ".join(sources) if kind != "live" else " + ".join(sources.values())
        self._journal = Journal.create(settings, kind=kind, title=title, root=self._root,
                                       on_status=self._emit)
        return self._journal.session_id

    def take(self, event) -> None:
        """An engine event (on its thread): queued for the journal open now, if it keeps it."""
        journal = self._journal  # the one open now: it is closed only after these
        if journal is not None and isinstance(event, JOURNALLED):
            self._queue.put((journal, event))

    def session(self):
        """The session as journalled so far (``sessions.Session``), or None."""
        j = self._journal
        return j.session() if j is not None else None

    # on the controller's thread: what the journal records besides the engine's events
    def stream_opened(self, stream_id: str, label: str, source: str) -> None:
        if self._journal is not None:
            self._journal.stream_opened(stream_id, label=label, source=source)

    def engine_ready(self, engine_settings, ready_info) -> None:
        """The engine the session runs on is ready (again): what it resolved to is recorded."""
        if self._journal is not None:
            self._journal.update_settings(**engine_session_settings(engine_settings, ready_info))

    def paused(self) -> None:
        if self._journal is not None:
            self._journal.paused()

    def resumed(self) -> None:
        if self._journal is not None:
            self._journal.resumed()

    def close(self) -> None:
        """Close the journal once every event queued for it is written."""
        journal, self._journal = self._journal, None
        if journal is None:
            return
        done = threading.Event()

        def close() -> None:
            journal.close()
            done.set()
        self._queue.put(close)
        done.wait(CLOSE_WAIT_S)

    def stop(self, timeout: float = 10.0) -> None:
        """End the feed's thread once everything queued is written (close the journal first)."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                if callable(item):
                    item()
                else:
                    journal, event = item
                    journal.on_event(event)
            except Exception as exc:
                log.exception("the journal failed")
                self._emit(AppProblem(f"Journal error: {exc!r}", "", "journal"))
