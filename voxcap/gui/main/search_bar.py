"""Find in a text view: Enter for the next match, Shift+Enter the previous, Escape back to the text."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from ..a11y import announce, status_label

# the find box's own keys (eventFilter and returnPressed below); Help → Keyboard shortcuts lists them
FIND_KEYS = (("Return", "next match"), ("Shift+Return", "previous match"),
             ("Escape", "back to the captions"))


class SearchBar(QWidget):
    searched = Signal(str)  # a find asked for (the day's earlier sessions are searched too)

    def __init__(self, view, parent=None) -> None:
        super().__init__(parent)
        self.view = view
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find in captions (Ctrl+F)")
        self.edit.setAccessibleName("Find in captions")
        self.edit.setClearButtonEnabled(True)
        # no mnemonics: Alt+P is the Previous sessions tab's; Enter and Shift+Enter in the box
        self.prev_button = QPushButton("Previous", self)
        self.next_button = QPushButton("Next", self)
        self.prev_button.setAccessibleName("Previous match")
        self.next_button.setAccessibleName("Next match")
        # read as its text ("24 matches"), said politely after each find (the focus stays in the box)
        self.result = status_label(QLabel("", self), "Search result")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.prev_button)
        lay.addWidget(self.next_button)
        lay.addWidget(self.result)
        self.edit.returnPressed.connect(self.find_next)
        self.next_button.clicked.connect(self.find_next)
        self.prev_button.clicked.connect(self.find_previous)
        self.edit.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.edit and event.type() == event.Type.KeyPress:
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                    event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.find_previous()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.view.setFocus()
                return True
        return super().eventFilter(obj, event)

    def focus(self) -> None:
        self.edit.setFocus()
        self.edit.selectAll()

    def find_next(self) -> bool:
        return self._find(backward=False)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    def _find(self, backward: bool) -> bool:
        text = self.edit.text()
        self.searched.emit(text)
        if not text:
            self.result.setText("")
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        found = self.view.find(text, flags)
        if not found:  # wrap around
            cur = self.view.textCursor()
            cur.movePosition(QTextCursor.MoveOperation.End if backward
                             else QTextCursor.MoveOperation.Start)
            self.view.setTextCursor(cur)
            found = self.view.find(text, flags)
        count = self.view.toPlainText().casefold().count(text.casefold())
        if found:
            self.view.ensureCursorVisible()
            self.result.setText(f"{count} match{'es' if count != 1 else ''}")
        else:
            self.result.setText("No match")
        announce(self.result, self.result.text())
        return found
