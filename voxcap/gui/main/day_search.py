"""Find in the day's earlier sessions: what the find box looks for is also looked for in every
session started today (``captions.search``), off the GUI thread; the hits are listed under the
find row, and choosing one opens its session in Previous sessions."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ...captions.masking import Masker
from ...captions.search import SearchHit, search_sessions, start_of_day
from ..a11y import announce, status_label

SHOWN_HITS = 200


class DaySearch(QWidget):
    sessionChosen = Signal(str)  # a hit's session id
    _found = Signal(int, str, object)  # search number, query, hits (from the worker thread)

    def __init__(self, root=None, parent=None) -> None:
        super().__init__(parent)
        self.root = root
        self.current_session = lambda: ""  # the session the history shows: not listed again
        # the profanity masker the settings ask for now (the app's)
        self.masker: Callable[[], Masker | None] = lambda: None
        self.result = status_label(QLabel("", self), "Matches in today's earlier sessions")
        self.hits = QListWidget(self)
        self.hits.setAccessibleName("Matches in today's earlier sessions")
        self.hits.setMaximumHeight(self.fontMetrics().lineSpacing() * 6)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.result)
        lay.addWidget(self.hits)
        self._searches = 0
        self._found.connect(self._show)
        self.hits.itemActivated.connect(
            lambda item: self.sessionChosen.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.hide()

    def search(self, query: str) -> None:
        self._searches += 1
        number, exclude = self._searches, self.current_session()
        if not query.strip():
            self.hide()
            return

        def work() -> None:  # reads the day's journals: seconds on a slow disk
            hits = [h for h in search_sessions(query, self.root, since=start_of_day())
                    if h.session_id != exclude]
            self._found.emit(number, query, hits)
        threading.Thread(target=work, daemon=True, name="voxcap-day-search").start()

    def _show(self, number: int, query: str, hits: list[SearchHit]) -> None:
        if number != self._searches:
            return  # an older query's answer
        self.hits.clear()
        masker = self.masker()
        for h in hits[:SHOWN_HITS]:
            when = time.strftime("%H:%M", time.localtime(h.wall))
            line = masker.mask_text(h.line) if masker else h.line  # as the history shows it
            item = QListWidgetItem(f"{when}  {h.label}: {line}")
            item.setData(Qt.ItemDataRole.UserRole, h.session_id)
            item.setToolTip("Enter or double-click: open this session in Previous sessions")
            self.hits.addItem(item)
        sessions = len({h.session_id for h in hits})
        text = (f"“{query}” in today's earlier sessions: {len(hits)} "
                f"match{'es' if len(hits) != 1 else ''} in {sessions} "
                f"session{'s' if sessions != 1 else ''} (Enter on one opens it)" if hits
                else f"“{query}” is not in today's earlier sessions")
        self.result.setText(text)
        self.hits.setVisible(bool(hits))
        self.show()
        announce(self.result, text)
