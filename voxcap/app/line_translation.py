"""Finished caption lines of the session -> their language and translation, as events.

    lines = LineTranslation(ctl.record_line, target="en", on_notice=say)
    hub.subscribe(lines.on_event)       # TextDelta / StreamOpened / StreamFinished
    ...
    lines.close()

It keeps its own ``CaptionAssembler`` (the overlay's line width), so a line is the one people
saw; when a line is finished (the next one of its stream started, or the stream ended) it goes
to ``translate.worker.LineWorker`` at once, alone: its translation comes within a second (a
reader of live captions cannot wait for the speaker's sentence to end). A line cut mid-sentence
translates worse alone, so it also waits for the rest of its sentence (``line_sentences``: at
most ``hold_s`` after its stream's latest line), and a sentence over several lines goes to the
worker again as one piece (after the lines: they go first). Each result comes back through
``record`` (the controller journals it and publishes it) as one ``events.LineTranslated`` per
line: the line's own translation, then its share of its sentence's (``refined``). The live
displays (overlay, screen reader, OBS) keep the first; the journal, history, exports and the
caption page's past lines take the second in its place. ``on_event`` only assembles and queues:
the captions never wait for a translation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..captions.assembly import CaptionAssembler, CaptionLine
from ..events import AppProblem, LineTranslated, StreamFinished, StreamOpened, TextDelta
from ..translate.worker import QUEUE_LINES, FinishedLine, LineResult, LineWorker, Translators
from .line_sentences import HOLD_S, SentenceGroups, spread

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranslationModelMissing:
    """Lines in ``source`` cannot be translated into ``target``: no pair (nor two through English)
    is installed for them. Published once per source and target (the app offers the download)."""

    source: str
    target: str


def line_key(stream_id: str, start_s: float) -> tuple[str, float]:
    """A line as every assembler of the session knows it: its stream and when its first word
    started (the line numbers of two assemblers differ; their words and times do not)."""
    return stream_id, round(start_s, 3)


class LineTranslation:
    def __init__(self, record: Callable[[LineTranslated], None], *, target: str = "",
                 models_dir: Path | None = None, width: int = 42,
                 on_notice: Callable[[str], None] = lambda text: None,
                 translators: Translators | None = None, queue_lines: int = QUEUE_LINES,
                 on_missing: Callable[[str, str], None] | None = None,
                 hold_s: float = HOLD_S) -> None:
        from ..translate.models import default_models_dir

        self.record = record
        self.target = target
        if translators is None and target:
            translators = Translators(models_dir or default_models_dir())
        self._assembler = CaptionAssembler(width=width)
        self._lock = threading.Lock()  # events may come from more than one thread
        self._sent: set[int] = set()
        self._sentences: SentenceGroups[FinishedLine] = SentenceGroups(hold_s)
        self._timer: threading.Timer | None = None  # releases a fragment nothing followed
        self._timer_due: float | None = None  # when it fires
        self.worker = LineWorker(target=target or None, translators=translators,
                                 on_result=self._result, on_notice=on_notice,
                                 queue_lines=queue_lines, on_missing=on_missing).start()

    def on_event(self, event) -> None:
        if not isinstance(event, (TextDelta, StreamFinished, StreamOpened)):
            return
        with self._lock:
            if isinstance(event, StreamOpened):
                self._assembler.set_label(event.stream_id, event.label)
                return
            for update in self._assembler.on_event(event):
                if update.new_line:
                    self._submit_finished(update.line.stream_id, update.line.line_id)
                elif update.line.final:
                    self._submit(update.line)
            if isinstance(event, StreamFinished):  # its last sentence, ended or not
                self._send(self._sentences.flush(event.stream_id))
            self._send(self._sentences.due(time.monotonic()))

    def _submit_finished(self, stream_id: str, new_line_id: int) -> None:
        """A new line began: the stream's line before it is finished."""
        for line in reversed(self._assembler.history):
            if line.stream_id == stream_id and line.line_id != new_line_id:
                if line.final:
                    self._submit(line)
                return

    def _submit(self, line: CaptionLine) -> None:
        if line.line_id in self._sent or not line.text.strip():
            return
        self._sent.add(line.line_id)
        finished = FinishedLine(line.line_id, line.stream_id, line.text, line.start_s, line.end_s,
                                line.label)
        self.worker.submit(finished)
        self._send(self._sentences.add(finished, time.monotonic()))

    def _send(self, sentences: list[list[FinishedLine]]) -> None:
        """Queue each sentence of several lines as one piece (a sentence of one line was
        translated as that line; nothing to refine when only languages are asked for); then
        wake up when the next fragment is due."""
        for lines in sentences:
            if len(lines) > 1 and self.worker.target:
                last = lines[-1]
                self.worker.submit(FinishedLine(
                    last.line_id, last.stream_id, " ".join(ln.text.strip() for ln in lines),
                    lines[0].start_s, last.end_s, last.label, tuple(lines)))
        due = self._sentences.next_due()
        if due == self._timer_due:
            return  # armed for it already (on_event calls this for every event)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_due = due
        if due is not None:
            self._timer = threading.Timer(max(0.0, due - time.monotonic()), self._release_due)
            self._timer.daemon = True
            self._timer.start()

    def _release_due(self) -> None:
        with self._lock:
            self._timer, self._timer_due = None, None
            self._send(self._sentences.due(time.monotonic()))

    def _result(self, r: LineResult) -> None:
        """One event per line: a line's own translation, or a sentence's spread over its lines
        (none when the sentence was not translated: its lines keep their own)."""
        if r.line.refined and not r.translation:
            return
        lines = r.line.parts or (r.line,)
        pieces = spread(r.translation, [len(ln.text) for ln in lines])
        for line, piece in zip(lines, pieces, strict=True):
            self.record(LineTranslated(line.stream_id, line.line_id, line.text, line.start_s,
                                       line.end_s, r.language, r.target, piece, r.line.refined))

    def retarget(self, target: str) -> None:
        """Translate the lines finished from now on into ``target`` ("" = languages only)."""
        if target and self.worker.translators is None:
            from ..translate.models import default_models_dir

            self.worker.translators = Translators(default_models_dir())
        self.worker.retarget(target)
        self.target = target

    def models_changed(self) -> None:
        """A translation model was installed or removed (Settings, the first-use offer)."""
        self.worker.models_changed()

    def finish(self, drain_s: float) -> bool:
        """Send every sentence still waiting for its end and wait up to ``drain_s`` for all to
        be translated (before the journal closes); True if they were."""
        with self._lock:
            self._send(self._sentences.flush())
        return self.worker.drain(drain_s)

    def close(self, drain_s: float = 0.0) -> None:
        """Stop; ``drain_s``: first wait that long for the lines still queued (a file's end)."""
        if drain_s:
            self.finish(drain_s)
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        self.worker.stop()


def attach(controller, hub, changes, target: str, width: int = 42) -> LineTranslation | None:
    """The app's line translation: fed by ``hub`` (the controller's events), its notices
    published there as ``AppProblem``s (a missing pair as ``TranslationModelMissing``: the app
    offers its download), its last lines finished before the journal closes, its
    target following ``translation.translate_to``; ``width``: the lines' (the app's assembler's,
    so a line translated is a line shown). None for a stand-in controller (tests)."""
    record = getattr(controller, "record_line", None)
    if record is None:
        return None
    lines = LineTranslation(record, target=target, width=width,
                            on_notice=lambda text: hub.publish(AppProblem(text, "", "translation")),
                            on_missing=lambda source, target: hub.publish(
                                TranslationModelMissing(source, target)))
    hub.subscribe(lines.on_event)
    controller.before_journal_close.append(lambda: lines.finish(5.0))
    changes.subscribe(lambda c: lines.retarget(c.new.translation.translate_to),
                      "translation.translate_to")
    return lines
