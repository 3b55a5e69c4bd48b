"""Previous sessions from the journal: pick one to read it (with its translations, if it has
them), export it as SRT/VTT/TXT; a search hit opens at its words, highlighted."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ...captions.export import render
from ...captions.masking import Masker
from ...captions.search import SearchHit
from ...captions.sessions import Session, SessionInfo, SessionStore, length_words
from ...captions.transcript_find import match_span, transcript_mode
from ...errors import VoxcapError


def list_text(info: SessionInfo) -> str:
    """A session's row: when it started, how long it captioned, its state, who spoke (the
    session id, which says nothing to a person, is in the tooltip and the details)."""
    row = info.summary()
    who = f" — {row.speakers}" if row.speakers else ""
    title = f" — {row.title}" if row.title else ""
    return f"{row.date} {row.time}  {row.length}, {row.state}{who}{title}"


class SessionsView(QWidget):
    exportRequested = Signal(object)  # a sessions.Session

    def __init__(self, root=None, parent=None) -> None:
        super().__init__(parent)
        self.store = SessionStore(root)
        self.session: Session | None = None
        # the profanity masker the settings ask for now (the app's)
        self.masker: Callable[[], Masker | None] = lambda: None
        self.list = QListWidget(self)
        self.list.setAccessibleName("Previous sessions")
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.text.setAccessibleName("Transcript of the selected session")
        self.info = QLabel("", self)
        self.info.setWordWrap(True)
        self.refresh_button = QPushButton("Re&fresh", self)  # Alt+R: the engine status row's Retry
        self.export_button = QPushButton("E&xport session…", self)
        self.export_button.setEnabled(False)
        split = QSplitter(self)
        split.addWidget(self.list)
        right = QWidget(split)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.info)
        rl.addWidget(self.text, 1)
        split.addWidget(right)
        split.setStretchFactor(1, 2)
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        lay = QVBoxLayout(self)
        lay.addWidget(split, 1)
        lay.addLayout(buttons)
        self.refresh_button.clicked.connect(self.refresh)
        self.list.currentItemChanged.connect(self._selected)
        self.export_button.clicked.connect(lambda: self.exportRequested.emit(self.session))

    def refresh(self) -> None:
        current = self.session.session_id if self.session else None
        self.list.clear()
        for info in self.store.list():
            item = QListWidgetItem(list_text(info))
            item.setData(Qt.ItemDataRole.UserRole, str(info.path))
            item.setData(Qt.ItemDataRole.UserRole + 1, info.session_id)
            item.setToolTip(f"Session {info.session_id}")
            self.list.addItem(item)
            if info.session_id == current:
                self.list.setCurrentItem(item)
        self._fit_list()

    def _fit_list(self) -> None:
        """As wide as its longest row: the time, length and state are never cut off."""
        scroll = self.list.verticalScrollBar().sizeHint().width()
        need = self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + scroll + 8
        self.list.setMinimumWidth(min(max(need, 200), max(self.width() * 2 // 3, 200)))

    def select(self, session_id: str) -> bool:
        """Show the session ``session_id`` (a search hit's); False if it is not listed."""
        self.refresh()
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole + 1) == session_id:
                self.list.setCurrentItem(item)
                return True
        return False

    def _selected(self, item, _previous=None) -> None:
        if item is None:
            return
        try:
            s = self.session = self.store.open(item.data(Qt.ItemDataRole.UserRole))
        except VoxcapError as exc:
            self.session = None
            self.text.setPlainText(f"{exc.message}\n{exc.fix}")
            self.export_button.setEnabled(False)
            return
        warn = f" — {len(s.warnings)} damaged lines skipped" if s.warnings else ""
        self.info.setText(f"{s.session_id}: {length_words(s.end_s or 0.0)} of audio, "
                          f"{', '.join(dict.fromkeys(s.labels.values()))}{warn}")
        self.show_text()
        self.export_button.setEnabled(True)

    def show_text(self) -> None:
        """The chosen session's transcript, masked as the settings ask (its journal is not),
        each line's translation under it when it was translated."""
        if self.session is not None:
            self.text.setExtraSelections([])
            self.text.setPlainText(render(self.session, ".txt", timestamps=True,
                                          masker=self.masker(),
                                          translation=transcript_mode(self.session))[0])

    def show_match(self, hit: SearchHit, nth: int = 0) -> bool:
        """Scroll the transcript to ``hit`` (the ``nth`` place of its words, ``transcript_find``),
        select and highlight it and give it the focus; False when it is not there."""
        if self.session is None or self.session.session_id != hit.session_id:
            return False
        span = match_span(self.text.toPlainText(), hit, nth, set(self.session.labels.values()))
        if span is None:
            return False
        cursor = self.text.textCursor()
        cursor.setPosition(span[0])
        cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
        mark = QTextEdit.ExtraSelection()  # stays when the focus leaves (the selection fades)
        mark.cursor = QTextCursor(cursor)
        mark.format.setBackground(QColor("#ffe14d"))
        mark.format.setForeground(QColor("#000000"))
        self.text.setExtraSelections([mark])
        self.text.setTextCursor(cursor)
        self.text.centerCursor()
        # the tab was just shown: centred again once it is laid out at its size
        QTimer.singleShot(0, self.text.centerCursor)
        self.text.setFocus()
        return True
