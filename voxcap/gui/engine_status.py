"""The engine's state in one line: loading stages with progress, ready, or the error and its fix."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

STAGES = ("importing", "starting engine process", "loading weights", "compiling",
          "capturing graphs", "allocating cache")


class EngineStatus(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel("Engine: not started", self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAccessibleName("Engine status")
        self.fix = QLabel("", self)
        self.fix.setWordWrap(True)
        self.fix.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fix.setAccessibleName("How to fix the engine problem")
        self.fix.hide()
        self.bar = QProgressBar(self)
        self.bar.setRange(0, len(STAGES) + 1)
        self.bar.setMaximumWidth(220)
        self.bar.setAccessibleName("Engine start-up progress")
        self.bar.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.bar)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.fix)
        self.state = "idle"

    def _set(self, state: str, text: str, fix: str = "", progress: int | None = None) -> None:
        self.state = state
        self.label.setToolTip("")
        self.label.setAccessibleDescription("")
        self.label.setText(text)
        self.label.setStyleSheet("color: #c62828; font-weight: bold;" if state == "failed" else "")
        self.fix.setText(f"Fix: {fix}" if fix else "")
        self.fix.setVisible(bool(fix))
        if progress is None:
            self.bar.hide()
        else:
            self.bar.setValue(progress)
            self.bar.setFormat(f"{progress}/{len(STAGES) + 1}")
            self.bar.show()

    def progress(self, ev) -> None:
        step = STAGES.index(ev.stage) + 1 if ev.stage in STAGES else self.bar.value()
        secs = f" ({ev.elapsed_s:.0f} s)" if ev.elapsed_s >= 1 else ""
        self._set("loading", f"Engine: {ev.stage}…{secs}", progress=step)

    def restarting(self, ev) -> None:
        self._set("loading", f"Engine: restarting ({ev.reason}); captions shown stay, new ones "
                             "resume when it is ready", progress=0)

    def ready(self, ev) -> None:
        mode = ev.resolved_graph_mode
        asked = "" if mode == ev.requested_graph_mode else f", requested {ev.requested_graph_mode}"
        self._set("ready", f"Engine ready on {ev.device} in {ev.start_seconds:.0f} s: graph mode "
                           f"{mode}{asked}, delay {ev.transcription_delay_ms} ms")
        notes = "\n".join(ev.notes)
        self.label.setToolTip(notes)
        self.label.setAccessibleDescription(notes)

    def failed(self, ev) -> None:
        self._set("failed", f"Engine error: {ev.message}", ev.fix)

    def stopped(self) -> None:
        self._set("idle", "Engine: stopped")

    def message(self, text: str, fix: str = "") -> None:
        self._set("idle", text, fix)
