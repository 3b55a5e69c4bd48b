"""Finished caption lines of the session -> their language and translation, as events.

    lines = LineTranslation(ctl.record_line, target="en", on_notice=say)
    hub.subscribe(lines.on_event)       # TextDelta / StreamOpened / StreamFinished
    ...
    lines.close()

It keeps its own ``CaptionAssembler`` (the overlay's line width), so a line is the one people
saw; when a line is finished (the next one of its stream started, or the stream ended) it goes
to ``translate.worker.LineWorker``, whose result comes back as ``events.LineTranslated`` through
``record`` (the controller journals it and publishes it). ``on_event`` only assembles and queues:
the captions never wait for a translation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..captions.assembly import CaptionAssembler, CaptionLine
from ..events import AppProblem, LineTranslated, StreamFinished, StreamOpened, TextDelta
from ..translate.worker import QUEUE_LINES, FinishedLine, LineResult, LineWorker, Translators

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
                 on_missing: Callable[[str, str], None] | None = None) -> None:
        from ..translate.models import default_models_dir

        self.record = record
        self.target = target
        if translators is None and target:
            translators = Translators(models_dir or default_models_dir())
        self._assembler = CaptionAssembler(width=width)
        self._lock = threading.Lock()  # events may come from more than one thread
        self._sent: set[int] = set()
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
        self.worker.submit(FinishedLine(line.line_id, line.stream_id, line.text, line.start_s,
                                        line.end_s, line.label))

    def _result(self, r: LineResult) -> None:
        self.record(LineTranslated(r.line.stream_id, r.line.line_id, r.line.text, r.line.start_s,
                                   r.line.end_s, r.language, r.target, r.translation))

    def retarget(self, target: str) -> None:
        """Translate the lines finished from now on into ``target`` ("" = languages only)."""
        if target and self.worker.translators is None:
            from ..translate.models import default_models_dir

            self.worker.translators = Translators(default_models_dir())
        self.worker.target = target
        self.target = target

    def close(self, drain_s: float = 0.0) -> None:
        """Stop; ``drain_s``: first wait that long for the lines still queued (a file's end)."""
        if drain_s:
            self.worker.drain(drain_s)
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
    controller.before_journal_close.append(lambda: lines.worker.drain(5.0))
    changes.subscribe(lambda c: lines.retarget(c.new.translation.translate_to),
                      "translation.translate_to")
    return lines
