"""Find in the day's earlier sessions: what the find box looks for is also looked for in every
session started today (``captions.search``: the words as heard and their translations), off
the GUI thread; the hits are listed under the find row (a translation's says so), all of them
counted, and choosing one opens its session in Previous sessions at the match."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ...captions.masking import Masker
from ...captions.search import SearchHit, search_sessions, start_of_day
from ...captions.transcript_find import occurrence
from ...translate.languages import language_name
from ..a11y import announce, status_label

SHOWN_HITS = 200


def hit_text(hit: SearchHit, line: str) -> str:
    """A hit's row: when, who, and which text the words are in."""
    when = time.strftime("%H:%M", time.localtime(hit.wall))
    where = f", in {language_name(hit.target)} (translation)" if hit.target else ""
    return f"{when}  {hit.label}{where}: {line}"


def summary(query: str, hits: list[SearchHit]) -> str:
    """What the search found, every match counted (only the first ``SHOWN_HITS`` are listed)."""
    if not hits:
        return f"“{query}” is not in today's earlier sessions"
    sessions = len({h.session_id for h in hits})
    translated = sum(1 for h in hits if h.target)
    parts = [f"“{query}” in today's earlier sessions: {len(hits):,} match"
             f"{'es' if len(hits) != 1 else ''}"]
    if translated:
        parts.append(f" ({translated:,} in translations)")
    parts.append(f" in {sessions} session{'s' if sessions != 1 else ''}")
    if len(hits) > SHOWN_HITS:
        parts.append(f", the first {SHOWN_HITS} listed")
    return "".join(parts) + " (Enter on one opens it at the match)"


class DaySearch(QWidget):
    hitChosen = Signal(object, int)  # a hit, and which of its words' places in its session
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
        self._hits: list[SearchHit] = []
        self.hits.itemActivated.connect(self._chosen)
        self.hide()

    def search(self, query: str) -> None:
        self._searches += 1
        number, exclude = self._searches, self.current_session()
        if not query.strip():
            self.hide()
            return

        def work() -> None:  # reads the day's journals: seconds on a slow disk
            hits = [h for h in search_sessions(query, self.root, since=start_of_day(), limit=None)
                    if h.session_id != exclude]
            self._found.emit(number, query, hits)
        threading.Thread(target=work, daemon=True, name="voxcap-day-search").start()

    def _show(self, number: int, query: str, hits: list[SearchHit]) -> None:
        if number != self._searches:
            return  # an older query's answer
        self.hits.clear()
        self._hits = hits
        masker = self.masker()
        for n, h in enumerate(hits[:SHOWN_HITS]):
            line = masker.mask_text(h.line) if masker else h.line  # as the history shows it
            item = QListWidgetItem(hit_text(h, line))
            item.setData(Qt.ItemDataRole.UserRole, n)
            item.setToolTip("Enter or double-click: open this session in Previous sessions, "
                            "at the match")
            self.hits.addItem(item)
        text = summary(query, hits)
        self.result.setText(text)
        self.hits.setVisible(bool(hits))
        self.show()
        announce(self.result, text)

    def _chosen(self, item: QListWidgetItem) -> None:
        hit = self._hits[item.data(Qt.ItemDataRole.UserRole)]
        self.hitChosen.emit(hit, occurrence(self._hits, hit))
