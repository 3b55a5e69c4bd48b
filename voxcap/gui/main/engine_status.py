"""The engine's state in one line: loading stages with progress, ready, or the error and its fix.

A stage that takes long shows that it is alive: its elapsed time counts up every second, next
to what the whole start took last time (``expected_s``, set by the app). Ready and errors are
announced to screen readers (``a11y``); the labels' accessible names are their text.

Every change goes through ``_show``: the text painted, its accessible name, the fix, the Retry
button (after an error; ``retryRequested``) and the announcement change together, and the
label is repainted before the GUI thread does anything else, so what a screen reader has just
heard is what the window shows. Long words (addresses) may break, so an error wraps inside the
window instead of running off its edge.
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..a11y import announce, status_label
from ..settings.setting_words import for_the_app

STAGES = ("importing", "starting engine process", "loading weights", "compiling",
          "capturing graphs", "allocating cache")
ZWSP = "\u200b"  # where a long word may break (shown only: the accessible name has none)
_LONG_WORD = re.compile(r"\S{24,}")


def breakable(text: str) -> str:
    """``text`` with break opportunities after the slashes, colons and dots of long words (an
    address): a word-wrapped QLabel breaks only at spaces, and runs past its edge otherwise."""
    return _LONG_WORD.sub(lambda m: re.sub(r"([/:.?&=_-])", "\\1" + ZWSP, m.group(0)), text)


class EngineStatus(QWidget):
    retryRequested = Signal()  # the Retry button (shown after an engine error)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel("Engine: not started", self)
        self.label.setWordWrap(True)
        # as wide as the row allows, never wider: the text wraps instead of being cut off
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setMinimumWidth(160)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        status_label(self.label, "Engine status")
        self.fix = QLabel("", self)
        self.fix.setWordWrap(True)
        self.fix.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        status_label(self.fix, "How to fix the engine problem")
        self.fix.hide()
        self.bar = QProgressBar(self)
        self.bar.setRange(0, len(STAGES) + 1)
        self.bar.setMaximumWidth(220)
        self.bar.setAccessibleName("Engine start-up progress")
        self.bar.hide()
        self.retry = QPushButton("&Retry (F5)", self)
        self.retry.setAccessibleName("Retry")
        self.retry.setAccessibleDescription("Start the engine again")
        self.retry.clicked.connect(self.retryRequested)
        self.retry.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.bar)
        row.addWidget(self.retry, 0, Qt.AlignmentFlag.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.fix)
        self.state = "idle"
        self.expected_s: float | None = None  # what the last start took
        self._stage = ""
        self._note = ""  # a stage's note for the person waiting (EngineProgress.note)
        self._stage_t0 = self._start_t0 = 0.0
        self._timer = QTimer(self, interval=1000)
        self._timer.timeout.connect(self._tick)

    def _set(self, state: str, text: str, fix: str = "", progress: int | None = None,
             said: str = "", assertive: bool = False, details: str = "") -> None:
        """The one place a status change goes through (see the module's docstring): ``said``
        is announced once the window shows ``text``; ``details`` are the tooltip and the
        accessible description's second half."""
        self.state = state
        self.label.setToolTip(details)
        self.label.setAccessibleDescription("Engine status" + (f". {details}" if details else ""))
        text, fix = for_the_app(text), for_the_app(fix)  # the core writes for the terminal
        self._text(text)
        self.label.setStyleSheet("color: #c62828; font-weight: bold;" if state == "failed" else "")
        self.fix.setText(breakable(f"Fix: {fix}") if fix else "")
        self.fix.setAccessibleName(f"Fix: {fix}" if fix else "")
        self.fix.setVisible(bool(fix))
        self.retry.setVisible(state == "failed")
        if state != "loading":
            self._timer.stop()
        if progress is None:
            self.bar.hide()
        else:
            self.bar.setValue(progress)
            self.bar.setFormat(f"{progress}/{len(STAGES) + 1}")
            self.bar.show()
        self._paint_now()
        if said:
            announce(self, for_the_app(said), assertive)

    def _text(self, text: str) -> None:
        """The label's text and its accessible name (the same words, without break marks)."""
        self.label.setText(breakable(text))
        self.label.setAccessibleName(text)

    def _paint_now(self) -> None:
        """Lay the window out for the new text and paint it now, not whenever a low-priority
        update request gets its turn behind the events still queued."""
        top = self.window()
        layout = top.layout()
        if top.isVisible() and layout is not None:
            layout.activate()
        if self.isVisible():
            self.repaint()

    def progress(self, ev) -> None:
        at = STAGES.index(ev.stage) + 1 if ev.stage in STAGES else self.bar.value()
        step = at if at >= 0 else None  # a stage of no known place (the remote engine's)
        now = time.monotonic()
        if self.state != "loading":
            self._start_t0 = now - ev.elapsed_s
        if ev.stage != self._stage:
            self._stage, self._stage_t0 = ev.stage, now
            self._note = ""
        said = ""
        if ev.note and _gist(ev.note) != _gist(self._note):
            said = ev.note  # minutes of one stage: said once, not only shown (not each countdown)
        self._note = ev.note
        self._set("loading", self._loading_text(), progress=step, said=said)
        self._timer.start()

    def _loading_text(self) -> str:
        now = time.monotonic()
        text = f"Engine: {self._stage}… {now - self._stage_t0:.0f} s"
        total = now - self._start_t0
        last = (f"the last start took {self.expected_s:.0f} s" if self.expected_s
                else "the first start takes longest")
        if not self._stage.startswith("waiting"):  # for a server: how long starts take is moot
            text += f" (starting for {total:.0f} s; {last})"
        if self._note:
            text += f". {self._note}"
        return text

    def _tick(self) -> None:
        if self.state == "loading" and self._stage:
            self._text(self._loading_text())

    def restarting(self, ev) -> None:
        self._stage, self._start_t0 = "", time.monotonic()
        # the window hidden (to the tray), the overlay says it (OverlayStatus.window_says): once
        said = f"Engine restarting: {ev.reason}" if self.window().isVisible() else ""
        self._set("loading", f"Engine: restarting ({ev.reason}); captions shown stay, new ones "
                             "resume when it is ready", progress=0, said=said)

    def ready(self, ev, random_weights: bool = False, captioning: bool = False,
              paused: bool = False) -> None:
        """``random_weights``: a self-check engine (its words are gibberish: said so);
        ``captioning``: already on (a restart), so no "press Start"; ``paused``: "Resume"."""
        self._paused = paused
        self._ready = (ev, random_weights)
        notes = "\n".join((getattr(ev, "precision_line", "") and [ev.precision_line] or [])
                          + list(ev.notes))
        self._stage = ""
        said = (f"Connected to the vLLM server in {ev.start_seconds:.1f} s"
                if getattr(ev, "server", "") else f"Engine ready in {ev.start_seconds:.0f} s")
        self._set("ready", self._ready_text(captioning), details=notes, said=said)

    def _ready_text(self, captioning: bool) -> str:
        ev, random_weights = self._ready
        mode = ev.resolved_graph_mode
        asked = "" if mode == ev.requested_graph_mode else f" (asked for {ev.requested_graph_mode})"
        precision = f", {ev.precision}" if getattr(ev, "precision", "") else ""
        next_step = (" Paused: press Resume (F6)." if captioning and getattr(self, "_paused", False)
                     else " Captioning." if captioning else " Press Start captioning (F5).")
        words = (" Random weights (self-check): the captions will be gibberish, not your speech."
                 if random_weights else "")
        if getattr(ev, "server", ""):  # how the server runs the model is not known here
            return (f"Captions from the vLLM server: {ev.server} (connected in "
                    f"{ev.start_seconds:.1f} s).{next_step} Delay {ev.transcription_delay_ms} ms.")
        return (f"Engine ready on {ev.device} in {ev.start_seconds:.0f} s.{next_step}{words} "
                f"Graph mode {mode}{asked}{precision}, delay {ev.transcription_delay_ms} ms.")

    def captioning(self, on: bool, paused: bool = False) -> None:
        """Captioning started, paused or stopped: the ready line names the next step for that
        (no "Press Start" while captions run, "Resume" while paused; "Press Start" is back after
        Stop). Nothing announced: the captioning state is announced by its own control."""
        self._paused = paused
        if self.state == "ready" and getattr(self, "_ready", None):
            self._text(for_the_app(self._ready_text(on)))

    def failed(self, ev) -> None:
        self._set("failed", f"Engine error: {ev.message}", ev.fix, assertive=True,
                  said=f"Engine error: {ev.message}" + (f" Fix: {ev.fix}" if ev.fix else ""))

    def stopped(self) -> None:
        self._set("idle", "Engine: stopped")

    def message(self, text: str, fix: str = "") -> None:
        self._set("idle", text, fix)


def _gist(note: str) -> str:
    """A note without its numbers: "retrying in 4 s" and "retrying in 8 s" are one message."""
    return re.sub(r"\d+(\.\d+)?", "#", note or "")
