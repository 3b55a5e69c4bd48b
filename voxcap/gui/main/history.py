"""The session's caption history: append-only plain text that screen readers can read.

A ``QPlainTextEdit`` (read-only, selectable and navigable by keyboard), so assistive technology
sees one text document: it can be read line by line with the arrow keys, searched, selected and
copied, and Qt announces inserted text. One paragraph per block: a paragraph starts after a pause
or when the speaker (stream) changes, with its wall-clock time and, with several streams, the
speaker's label ("[14:03:27] Them: ..."). Paragraphs stand in the order they were heard, not
the order their captions arrived: a lagging stream's paragraph goes in before the later ones of
the other speaker. New text goes in through a cursor of its own, so the user's selection and
reading position are never disturbed; the view follows new text only while it is scrolled to
the end.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextBlock, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from ...captions.assembly import CaptionLine


class HistoryView(QPlainTextEdit):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Caption history")
        self.setAccessibleDescription("Every caption of this session, one paragraph per line, "
                                      "newest at the end. Ctrl+F searches.")
        self.setPlaceholderText("Captions of this session appear here.")
        font = QFont(self.font())
        font.setPointSize(max(12, font.pointSize() + 2))
        self.setFont(font)
        self.show_labels = False
        # the wall time of a line's start, or None (the app's capture clock)
        self.time_of: Callable[[CaptionLine], float | None] | None = None
        self._blocks: dict[int, QTextBlock] = {}  # line id -> its paragraph
        # the paragraphs in document order: when heard (their sort key), their stream ("": a
        # note or a translation, which keep their place after the paragraph before them)
        self._heard: list[float] = []
        self._paragraphs: list[tuple[str, QTextBlock]] = []

    def clear_history(self) -> None:
        self.clear()
        self._blocks.clear()
        self._heard.clear()
        self._paragraphs.clear()

    def _heard_at(self, line) -> float:
        at = self.time_of(line) if self.time_of else None
        return at if at else time.time()

    def _prefix(self, line, at: float) -> str:
        stamp = time.strftime("[%H:%M:%S] ", time.localtime(at))
        return stamp + (f"{line.label}: " if self.show_labels else "")

    def _add_paragraph(self, at: int, heard: float, stream: str, text: str) -> QTextBlock:
        """A new paragraph as the ``at``-th of ``_paragraphs`` (at the end when it is their
        count)."""
        doc = self.document()
        cur = QTextCursor(doc)
        if at == len(self._paragraphs):
            cur.movePosition(QTextCursor.MoveOperation.End)
            if doc.characterCount() > 1:
                cur.insertBlock()
            cur.insertText(text)
            block = cur.block()
        else:
            before = self._paragraphs[at][1]
            if before.previous().isValid():  # after the block before it
                cur.setPosition(before.position() - 1)
                cur.insertBlock()
                cur.insertText(text)
                block = cur.block()
            else:  # the first block: Qt keeps its handle on the text put in front of it
                cur.setPosition(0)
                cur.insertText(text)
                cur.insertBlock()
                block, moved = before, before.next()
                self._paragraphs = [(s, moved if b == before else b) for s, b in self._paragraphs]
                self._blocks = {k: moved if b == before else b for k, b in self._blocks.items()}
        self._heard.insert(at, heard)
        self._paragraphs.insert(at, (stream, block))
        return block

    def _add_note(self, text: str) -> None:
        """A line that is not a caption, after the paragraphs so far."""
        self._add_paragraph(len(self._paragraphs), self._heard[-1] if self._heard else -1.0,
                            "", text)

    def note_source(self, label: str, origin: str) -> None:
        """A line saying where a stream's captions come from (when it opens)."""
        self._add_note(time.strftime("[%H:%M:%S] ") + f"({label}: captions of {origin})")

    def add_translation(self, text: str, language: str, target: str) -> None:
        """A finished line's translation (``events.LineTranslated``), as a block of its own after
        the text so far, marked with both languages; the next caption starts a new paragraph."""
        if not text:
            return
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        self._add_note(f"    [{language}→{target}] {text}")
        if follow:
            bar.setValue(bar.maximum())

    def apply(self, updates) -> None:
        if not updates:
            return
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        cur = QTextCursor(self.document())
        for u in updates:
            line = u.line
            if u.new_line:
                heard = self._heard_at(line)
                at = bisect_right(self._heard, heard)  # after what was heard before it
                before = self._paragraphs[at - 1] if at else None
                if not line.paragraph_start and before is not None and before[0] == line.stream_id:
                    block = before[1]  # the paragraph goes on
                    cur.setPosition(block.position() + block.length() - 1)
                    cur.insertText(" " + line.text)
                else:
                    block = self._add_paragraph(at, heard, line.stream_id,
                                                self._prefix(line, heard) + line.text)
                self._blocks[line.line_id] = block
            elif u.added:
                grown = self._blocks.get(line.line_id)
                if grown is None:
                    continue
                cur.setPosition(grown.position() + grown.length() - 1)
                cur.insertText(u.added)
        if follow:
            bar.setValue(bar.maximum())
