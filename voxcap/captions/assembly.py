"""Live caption assembly: engine deltas -> words -> lines for an overlay and a history.

No Qt here; a GUI turns ``CaptionUpdate``s into repaints, ``voxcap live`` into printed text.

    asm = CaptionAssembler(width=42, max_lines=2, pause_s=1.5, masker=None)
    asm.set_label(stream_id, "You")          # per stream; default: the stream id
    for update in asm.on_event(event):       # TextDelta / StreamFinished (others ignored)
        ...                                  # update.line: CaptionLine, update.new_line, update.added
    asm.visible()                            # the last ``max_lines`` lines, all streams
    asm.history                              # every line so far (CaptionLine snapshots)

Rules:
- Append-only: a line's text only ever grows (``update.added`` is exactly what was appended,
  with its leading space), and a full line is never re-wrapped, so nothing shown flickers
  or moves. Voxtral Realtime never revises its text, and neither does this.
- A word is placed when complete (see ``words.WordBuilder``: ~80 ms after its last piece).
  A piece that continues an already shown word ("glue", e.g. punctuation) is appended to it
  without a space, even if that overflows the width by a few columns, unless it is longer
  than 3 columns: then it starts the next line.
- Lines are at most ``width`` display columns; a word wider than that is cut.
- A pause of at least ``pause_s`` (audio time, between the end of one word and the start of
  the next) starts a new line marked ``paragraph_start``: a new speaker does not run on from
  the last.
- Each stream has its own lines, labelled (``"You"``/``"Them"`` or a source name); lines of
  several streams interleave in the order they were started.
- ``masker`` (``masking.Masker``) masks words as they are displayed.

Not thread-safe: feed it from one thread (the consumer of an ``EventHub`` queue, or the Qt
main thread), not from the engine's callback.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from ..events import StreamFinished, TextDelta
from .linebreak import display_width, split_to_width
from .masking import Masker
from .words import Word, WordBuilder

_GLUE_OVERFLOW = 3  # columns a continuation may overflow a line by


@dataclass(frozen=True)
class CaptionLine:
    line_id: int  # increasing, unique within an assembler
    stream_id: str
    label: str
    text: str
    start_s: float  # audio span of the words on the line
    end_s: float
    paragraph_start: bool  # first line of a stream or first after a pause
    final: bool = False  # no more text will be added to this line


@dataclass(frozen=True)
class CaptionUpdate:
    line: CaptionLine  # the line after the change
    new_line: bool  # True: the line was just started
    added: str  # text appended to the line ("" when only ``final`` changed)


class _StreamState:
    def __init__(self, stream_id: str) -> None:
        self.words = WordBuilder(stream_id, commit_on_silence=True)
        self.line: CaptionLine | None = None
        self.last_end: float | None = None
        self.word = ""  # the word placed last as said, its glued pieces too (for masking)


class CaptionAssembler:
    def __init__(self, width: int = 42, max_lines: int = 2, pause_s: float = 1.5,
                 masker: Masker | None = None, labels: dict[str, str] | None = None) -> None:
        if width < 4:
            raise ValueError("width must be at least 4 columns")
        self.width = width
        self.max_lines = max_lines
        self.pause_s = pause_s
        self.masker = masker
        self._labels = dict(labels or {})
        self._streams: dict[str, _StreamState] = {}
        self._ids = itertools.count(1)
        self._lines: list[CaptionLine] = []
        self._index: dict[int, int] = {}  # line_id -> position in _lines

    # ------------------------------------------------------------------ input ----
    def set_label(self, stream_id: str, label: str) -> None:
        self._labels[stream_id] = label

    def label(self, stream_id: str) -> str:
        return self._labels.get(stream_id) or stream_id

    def on_event(self, event) -> list[CaptionUpdate]:
        if isinstance(event, TextDelta):
            return self.feed(event)
        if isinstance(event, StreamFinished):
            return self.finish(event.stream_id)
        return []

    def feed(self, delta) -> list[CaptionUpdate]:
        """One delta (``TextDelta`` or anything with the same fields)."""
        st = self._state(delta.stream_id)
        out: list[CaptionUpdate] = []
        for word in st.words.feed(delta.text, delta.audio_start_s, delta.audio_end_s):
            out.extend(self._place(st, word))
        return out

    def finish(self, stream_id: str) -> list[CaptionUpdate]:
        """End of a stream: its last word is placed and its last line marked final."""
        st = self._streams.get(stream_id)
        if st is None:
            return []
        out = []
        for word in st.words.finish():
            out.extend(self._place(st, word))
        if st.line is not None:
            out.append(CaptionUpdate(self._set(replace(st.line, final=True)), False, ""))
            st.line = None
        st.last_end = None
        return out

    # ----------------------------------------------------------------- output ----
    @property
    def history(self) -> list[CaptionLine]:
        return list(self._lines)

    def visible(self, max_lines: int | None = None) -> list[CaptionLine]:
        n = self.max_lines if max_lines is None else max_lines
        return self._lines[-n:] if n > 0 else []

    # --------------------------------------------------------------- internals ---
    def _state(self, stream_id: str) -> _StreamState:
        st = self._streams.get(stream_id)
        if st is None:
            st = self._streams[stream_id] = _StreamState(stream_id)
        return st

    def _set(self, line: CaptionLine) -> CaptionLine:
        pos = self._index.get(line.line_id)
        if pos is None:
            self._index[line.line_id] = len(self._lines)
            self._lines.append(line)
        else:
            self._lines[pos] = line
        return line

    def _new_line(self, st: _StreamState, word: Word, text: str, paragraph: bool) -> CaptionUpdate:
        if st.line is not None:
            self._set(replace(st.line, final=True))
        line = CaptionLine(next(self._ids), word.stream_id, self.label(word.stream_id), text,
                           word.start_s, word.end_s, paragraph)
        st.line = self._set(line)
        return CaptionUpdate(line, True, text)

    def _append(self, st: _StreamState, line: CaptionLine, word: Word, added: str) -> CaptionUpdate:
        """``added`` at the end of ``line``, the stream's current one."""
        line = replace(line, text=line.text + added, end_s=max(line.end_s, word.end_s))
        st.line = self._set(line)
        return CaptionUpdate(line, False, added)

    @staticmethod
    def _masked(masker: Masker, st: _StreamState, word: Word) -> str:
        """``word`` as shown: masked as a whole word. A piece glued to a word already shown
        ("sh", then "it") is masked as the rest of the whole word ("sh**"), so a swear word
        cut by a silent step is not shown whole."""
        if not word.glue:
            st.word = word.text
            return masker.mask_word(word.text)
        before, st.word = st.word, st.word + word.text
        whole = masker.mask_word(st.word)  # the same length: the rest is its tail
        return whole[len(before):] if whole != st.word else word.text

    def _place(self, st: _StreamState, word: Word) -> list[CaptionUpdate]:
        text = self._masked(self.masker, st, word) if self.masker else word.text
        paragraph = st.last_end is None or word.start_s - st.last_end >= self.pause_s
        st.last_end = word.end_s
        line = st.line
        if paragraph and not word.glue:
            line = None
        w = display_width(text)
        if line is not None:
            used = display_width(line.text)
            if word.glue and (used + w <= self.width or w <= _GLUE_OVERFLOW):
                return [self._append(st, line, word, text)]
            if not word.glue and used + 1 + w <= self.width:
                return [self._append(st, line, word, " " + text)]
        pieces = split_to_width(text, self.width) if w > self.width else [text]
        first_is_paragraph = paragraph and (not word.glue or st.line is None)
        return [self._new_line(st, word, piece, first_is_paragraph and i == 0)
                for i, piece in enumerate(pieces)]
