"""The session's engine streams: opened one per source (its held audio first, then the live
blocks), each journalled and announced as ``StreamOpened``; flushed all together on stop, pause
and restart (``StreamFlush``); finished one by one by the engine."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import VoxcapError
from ...events import AppProblem, StreamOpened
from ..lag import CaptureClock
from .capture_routing import CaptureRouting
from .journal_feed import JournalFeed
from .stream_flush import StreamFlush


class CaptionStreams:
    def __init__(self, emit: Callable[[object], None], clock: CaptureClock, journal: JournalFeed,
                 routing: CaptureRouting, flush: StreamFlush,
                 watch: Callable[[str, str], None] | None = None) -> None:
        self._emit = emit
        self._clock = clock
        self._journal = journal
        self._routing = routing
        self._flush = flush
        self._watch = watch or (lambda _sid, _label: None)  # the caption watchdog
        self._open: dict[str, str] = {}  # stream id -> label

    def __bool__(self) -> bool:
        return bool(self._open)

    def open_all(self, eng, sources: list[tuple], ended: set[str]) -> None:
        """A stream per (spec, description) of ``sources``; one the engine refuses is reported
        and left out. A source in ``ended`` (a file read to its end meanwhile) is closed at
        once after its held audio."""
        for spec, desc in sources:
            label = spec.label
            try:
                sid = eng.open_stream(label)
            except VoxcapError as exc:
                self._emit(AppProblem(f"{label}: {exc.message}", exc.fix, "engine"))
                continue
            self._clock.open(sid)
            self._open[sid] = label
            self._journal.stream_opened(sid, label=label, source=desc)
            self._emit(StreamOpened(sid, label, desc))
            self._watch(sid, label)  # before its audio
            self._routing.connect(label, sid, eng)
            if label in ended:
                eng.close_stream(sid)

    def finished(self, stream_id: str) -> str | None:
        """The engine finished ``stream_id``: its label, or None if it was not open (flushed)."""
        return self._open.pop(stream_id, None)

    def forget(self) -> None:
        """The engine is gone: its streams with it."""
        self._open.clear()

    def flush(self, eng) -> None:
        """Close every open stream and wait for their last words (``StreamFlush``)."""
        sids = list(self._open)
        self._open.clear()
        self._flush.flush(eng, sids)
