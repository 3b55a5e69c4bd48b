"""Each event of the engine on its way out, on the engine's thread (quick): through the word
list first (it may hold a stream's text a few words, ``captions.glossary_stage``), then to the
journal, the flush's progress, the caption watchdog and the drop ledger, then out to every
front end. A finished stream is handed on (to the controller's thread); a finished line's
language and translation join the journal the same way."""

from __future__ import annotations

from collections.abc import Callable

from ...captions.glossary import Glossary
from ...captions.glossary_stage import GlossaryStage
from ...events import SessionRolled, StreamFinished, StreamGap, TextDelta
from .caption_watchdog import CaptionWatchdog
from .capture_routing import CaptureRouting
from .journal_feed import JournalFeed
from .stream_flush import StreamFlush


class CaptionPath:
    def __init__(self, emit: Callable[[object], None], journal: JournalFeed, flush: StreamFlush,
                 watchdog: CaptionWatchdog, routing: CaptureRouting,
                 on_finished: Callable[[StreamFinished], None]) -> None:
        self._emit = emit
        self._journal = journal
        self._flush = flush
        self._watchdog = watchdog
        self._routing = routing
        self._on_finished = on_finished
        self._glossary = GlossaryStage()  # the word list, applied before anyone sees the text
        self.rollovers = 0  # engine-session switches in this captioning session (the meter's)

    def set_glossary(self, glossary: Glossary) -> None:
        self._glossary.glossary = glossary

    def feed(self, event) -> None:
        for out in self._glossary.feed(event):
            self._on_corrected(out)

    def record_line(self, event) -> None:
        """A finished line's language and translation (``LineTranslated``): journalled with the
        session's captions, then out."""
        self._journal.take(event)
        self._emit(event)

    def _on_corrected(self, event) -> None:
        self._journal.take(event)
        if isinstance(event, SessionRolled):
            self.rollovers += 1
        if isinstance(event, (TextDelta, StreamFinished)):
            self._flush.progress()
        if isinstance(event, TextDelta):
            self._watchdog.delta(event)
        elif isinstance(event, StreamFinished):
            self._watchdog.unwatch(event.stream_id)
        if isinstance(event, StreamGap):
            self._routing.record_loss(("gap", event.stream_id), event.total_lost_s)
        self._emit(event)
        if isinstance(event, StreamFinished):
            self._on_finished(event)
