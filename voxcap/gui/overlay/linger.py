"""After Stop captioning: the overlay's last rows stay long enough to be read, then go.

A deaf or hard-of-hearing reader watches the overlay, not the Stop button: the words said just
before Stop must not vanish at once, nor stay on screen for ever as if still being said. They
stay for a reading time (subtitle practice: about 15 characters a second, at least 5 s, at most
15 s), then the overlay clears; the history, the transcript and the exports keep every line.
Captioning again clears the overlay at once: a new session starts blank, as the history does.

GUI thread only: the app hands over the controller's CaptioningState events (``on_state``).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer

from ...events import Captioning

log = logging.getLogger(__name__)

CHARS_PER_S = 15
MIN_MS, MAX_MS = 5000, 15000


def reading_time_ms(rows: list[str]) -> int:
    """How long ``rows`` (the text on screen) stay after Stop."""
    chars = sum(len(r) for r in rows)
    return int(min(MAX_MS, max(MIN_MS, chars * 1000 / CHARS_PER_S)))


class OverlayLinger(QObject):
    def __init__(self, overlay, reading_time=reading_time_ms) -> None:
        super().__init__(overlay)
        self.overlay = overlay
        self.reading_time = reading_time  # tests give a short one
        self.timer = QTimer(self, singleShot=True)
        self.timer.timeout.connect(self._clear)

    def on_state(self, state: Captioning, new_session: bool = False) -> None:
        if new_session:
            self.timer.stop()
            self.overlay.clear()
        elif state == Captioning.OFF:
            rows = self.overlay.visible_text()
            if rows:
                self.timer.start(self.reading_time(rows))
        elif state.active:
            self.timer.stop()

    def _clear(self) -> None:
        log.info("overlay cleared %d ms after captioning stopped", self.timer.interval())
        self.overlay.clear()
