"""The session's caption history: append-only plain text that screen readers can read.

A ``QPlainTextEdit`` (read-only, selectable and navigable by keyboard), so assistive technology
sees one text document: it can be read line by line with the arrow keys, searched, selected and
copied, and Qt announces inserted text. One paragraph per block: a paragraph starts after a pause
or when the speaker (stream) changes, with its wall-clock time and, with several streams, the
speaker's label ("[14:03:27] Them: ..."). Paragraphs stand in the order they were heard, not
the order their captions arrived: a lagging stream's paragraph goes in before the later ones of
the other speaker. A line's language, once known (``events.LineTranslated``, a moment after the
line ends), goes before its text as "[fr] " when it is not the language that speaker spoke last:
a reader sees where the language changes (and the first), without a tag on every line of a
one-language session. New text goes in through a cursor of its own, so the user's selection and
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

UNTAGGED_LINES = 200  # lines kept waiting for their language (it comes within seconds)
TRANSLATED_KEPT = 200  # translations kept for their sentence's, which comes within seconds


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
        # lines waiting for their language: line id -> (the line, a cursor before its text,
        # which moves along as text goes in before it)
        self._untagged: dict[int, tuple[CaptionLine, QTextCursor]] = {}
        self._spoken: dict[str, str] = {}  # stream id -> the language tagged last
        self._translated: dict[tuple[str, float], QTextBlock] = {}  # line key -> its translation

    def clear_history(self) -> None:
        self.clear()
        self._blocks.clear()
        self._heard.clear()
        self._paragraphs.clear()
        self._untagged.clear()
        self._spoken.clear()
        self._translated.clear()

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

    def _add_note(self, text: str) -> QTextBlock:
        """A line that is not a caption, after the paragraphs so far."""
        return self._add_paragraph(len(self._paragraphs),
                                   self._heard[-1] if self._heard else -1.0, "", text)

    def note_source(self, label: str, origin: str) -> None:
        """A line saying where a stream's captions come from (when it opens)."""
        self._add_note(time.strftime("[%H:%M:%S] ") + f"({label}: captions of {origin})")

    def add_translation(self, text: str, language: str, target: str,
                        key: tuple[str, float] | None = None, refined: bool = False) -> None:
        """A finished line's translation (``events.LineTranslated``), as a block of its own after
        the text so far, marked with both languages; the next caption starts a new paragraph.
        ``key``: the line's (``line_translation.line_key``); its share of its sentence's
        translation (``refined``, seconds later) takes the place of its own, as the journal's
        record does."""
        if not text:
            return
        note = f"    [{language}→{target}] {text}"
        block = self._translated.get(key) if key is not None and refined else None
        if block is not None and block.isValid():
            cur = QTextCursor(block)
            cur.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cur.insertText(note)
            return
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        block = self._add_note(note)
        if key is not None:
            self._translated[key] = block
            while len(self._translated) > TRANSLATED_KEPT:
                del self._translated[next(iter(self._translated))]
        if follow:
            bar.setValue(bar.maximum())

    def add_language(self, stream_id: str, start_s: float, end_s: float, language: str) -> None:
        """A finished line's language (``events.LineTranslated``): tagged on the stream's first
        line its audio overlaps when it differs from the language tagged last for that stream ("",
        too short to tell, tags nothing)."""
        if not language:
            return
        hit = next((line_id for line_id, (line, _) in self._untagged.items()
                    if line.stream_id == stream_id and line.start_s < end_s
                    and start_s < line.end_s), None)
        if hit is None:
            return
        mark = self._untagged[hit][1]
        for line_id in [n for n, (ln, _) in self._untagged.items()
                        if ln.stream_id == stream_id and n <= hit]:
            del self._untagged[line_id]  # this one, and the stream's lines before it
        if self._spoken.get(stream_id) == language:
            return
        self._spoken[stream_id] = language
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        mark.insertText(f"[{'other language' if language == 'other' else language}] ")
        if follow:
            bar.setValue(bar.maximum())

    def _await_language(self, line: CaptionLine, position: int) -> None:
        cur = QTextCursor(self.document())
        cur.setPosition(position)
        self._untagged[line.line_id] = (line, cur)
        while len(self._untagged) > UNTAGGED_LINES:  # lines whose language never came
            del self._untagged[next(iter(self._untagged))]

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
                    cur.insertText(" ")
                    start = cur.position()
                    cur.insertText(line.text)
                else:
                    prefix = self._prefix(line, heard)
                    block = self._add_paragraph(at, heard, line.stream_id, prefix + line.text)
                    start = block.position() + len(prefix)
                self._blocks[line.line_id] = block
                self._await_language(line, start)
            elif u.added:
                grown = self._blocks.get(line.line_id)
                if grown is None:
                    continue
                cur.setPosition(grown.position() + grown.length() - 1)
                cur.insertText(u.added)
            if line.line_id in self._untagged:  # its span as it grows
                self._untagged[line.line_id] = (line, self._untagged[line.line_id][1])
        if follow:
            bar.setValue(bar.maximum())
