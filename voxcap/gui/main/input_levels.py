"""The main window's input level bars: one per live source ("Them", "You"), so sound that is not
arriving can be seen. The levels are measured in the core (``app.session.input_levels``) and
read a few times a second while audio is captured; the GUI thread only sets the bars."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from ...app.session.input_levels import SILENT_DBFS

READ_EVERY_MS = 250  # as often as the core's level changes (its window is 0.25 s)
LOWEST_DB = -60  # the bar's empty end: below it is "silent"
NAME_EVERY_S = 1.0  # a bar's accessible name follows its figure this often (silent: at once)


def level_words(level: float | None) -> str:
    """A level as shown and said: "-23 dB", "silent", "no audio yet"."""
    if level is None:
        return "no audio yet"
    return "silent" if level < SILENT_DBFS else f"{level:.0f} dB"


class InputLevelBars(QWidget):
    """``read()`` gives each live source's level (dBFS, None: no audio yet); ``follow(True)``
    while audio is captured reads it every ``READ_EVERY_MS``; hidden while nothing is."""

    def __init__(self, read: Callable[[], dict[str, float | None]] = dict, parent=None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Input levels")
        self.read = read  # set by the app: the controller's reading
        self._rows: dict[str, tuple[QLabel, QProgressBar]] = {}
        self._named_at: dict[str, float] = {}  # when each bar's accessible name last changed
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.addWidget(QLabel("Input:", self))
        self._lay.addStretch(1)
        self._timer = QTimer(self, interval=READ_EVERY_MS)
        self._timer.timeout.connect(self.refresh)
        self.hide()

    def follow(self, capturing: bool) -> None:
        """Read the levels while audio is captured; else none are shown."""
        if capturing:
            if not self._timer.isActive():
                self._timer.start()
                self.refresh()
            return
        self._timer.stop()
        self.show_levels({})

    def refresh(self) -> None:
        if self.window().isVisible():  # hidden to the tray: read again once shown
            self.show_levels(self.read())

    def show_levels(self, levels: dict[str, float | None]) -> None:
        for label in [k for k in self._rows if k not in levels]:
            name, bar = self._rows.pop(label)
            self._named_at.pop(label, None)
            name.deleteLater()
            bar.deleteLater()
        for label, level in levels.items():
            bar = self._rows[label][1] if label in self._rows else self._add(label)
            words = level_words(level)
            bar.setValue(LOWEST_DB if level is None else max(LOWEST_DB, min(0, round(level))))
            bar.setFormat(words)
            self._name(label, bar, words)
        self.setVisible(bool(levels))

    def _name(self, label: str, bar: QProgressBar, words: str) -> None:
        """The bar's accessible name: its level, a new figure at most once a second (a screen
        reader is not sent one four times a second), at once when it turns silent or back."""
        name = f"{label} input level, {words}"
        old = bar.accessibleName()
        now = time.monotonic()
        figures = old.endswith(" dB") and words.endswith(" dB")
        if name != old and (not figures or now - self._named_at.get(label, 0.0) >= NAME_EVERY_S):
            bar.setAccessibleName(name)
            self._named_at[label] = now

    def _add(self, label: str) -> QProgressBar:
        name = QLabel(label, self)
        bar = QProgressBar(self)
        bar.setRange(LOWEST_DB, 0)
        bar.setTextVisible(True)
        bar.setMinimumWidth(120)
        bar.setToolTip(f"How loud the sound from {label} is now; \"silent\" below {SILENT_DBFS:.0f} dB")
        name.setBuddy(bar)
        at = self._lay.count() - 1  # before the stretch
        self._lay.insertWidget(at, name)
        self._lay.insertWidget(at + 1, bar, 1)
        self._rows[label] = (name, bar)
        return bar

    def level_of(self, label: str) -> tuple[int, str] | None:
        """The bar of ``label``: its value and its text (tests, diagnostics)."""
        if label not in self._rows:
            return None
        bar = self._rows[label][1]
        return bar.value(), bar.format()
