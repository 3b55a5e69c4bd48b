"""Subword deltas -> words, each with the audio span of the deltas it came from.

The engine's deltas are subword pieces: a leading space starts a new word (" w17"), a piece
without one continues the current word ("ing", ","), and many steps carry no text at all.

- ``clean_piece(text) -> str``: what of a delta's text can be shown: U+FFFD (bytes of a
  character still incomplete) and control characters dropped, any whitespace -> one space.
- ``Word(stream_id, text, start_s, end_s, glue=False)``.
- ``WordBuilder(stream_id, commit_on_silence)``: ``feed(text, start_s, end_s) -> list[Word]``
  and ``finish() -> list[Word]``.  A word is complete when the next word starts (a space),
  at the end of the stream, and, with ``commit_on_silence`` (live display), as soon as a step
  brings no text, so a word is shown ~80 ms after its last piece rather than when the next
  word begins.  A piece without a leading space that arrives after its word was already
  committed that way comes out as a ``Word`` with ``glue=True``: it belongs to the previous
  word (no space before it).  Offline (exports) there is no reason to commit early, so glue
  words never come out there.
- ``words_from_deltas(deltas) -> list[Word]``: every stream's words, in delta order.
  ``deltas`` are anything with ``stream_id, text, audio_start_s, audio_end_s`` (a
  ``voxcap.events.TextDelta`` or a journal ``DeltaRecord``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_SPACE_SPLIT = re.compile(r"(\s+)")
_SENTENCE_END = re.compile(r"[.!?\u2026\u3002\uff01\uff1f\u061f\u06d4\u0964][\"'\u201d\u2019)\]]*$")


def clean_piece(text: str) -> str:
    if not text:
        return ""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\ufffd":
            continue
        if ch.isspace():
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    return "".join(out)


def ends_sentence(word: str) -> bool:
    return bool(_SENTENCE_END.search(word))


@dataclass(frozen=True)
class Word:
    stream_id: str
    text: str  # never empty, no whitespace
    start_s: float
    end_s: float
    glue: bool = False  # continues the previous word: join without a space


class WordBuilder:
    """Words of one stream from its deltas' text, in order."""

    def __init__(self, stream_id: str, commit_on_silence: bool = False) -> None:
        self.stream_id = stream_id
        self.commit_on_silence = commit_on_silence
        self._text = ""
        self._start = 0.0
        self._end = 0.0
        self._glue = False
        self._boundary = True  # the next piece starts a new word even without a space

    def feed(self, text: str, start_s: float, end_s: float) -> list[Word]:
        out: list[Word] = []
        piece = clean_piece(text)
        if not piece:
            if self.commit_on_silence and self._text:
                out.append(self._commit())
            return out
        for part in _SPACE_SPLIT.split(piece):
            if not part:
                continue
            if part.isspace():
                if self._text:
                    out.append(self._commit())
                self._boundary = True
                continue
            if self._text:
                self._text += part
                self._end = end_s
            else:
                self._text, self._start, self._end = part, start_s, end_s
                self._glue = not self._boundary
            self._boundary = False
        return out

    def finish(self) -> list[Word]:
        out = [self._commit()] if self._text else []
        self._boundary = True
        return out

    def _commit(self) -> Word:
        word = Word(self.stream_id, self._text, self._start, max(self._end, self._start),
                    self._glue)
        self._text = ""
        return word


def words_from_deltas(deltas: Iterable) -> list[Word]:
    builders: dict[str, WordBuilder] = {}
    words: list[Word] = []
    for d in deltas:
        b = builders.get(d.stream_id)
        if b is None:
            b = builders[d.stream_id] = WordBuilder(d.stream_id)
        words.extend(b.feed(d.text, d.audio_start_s, d.audio_end_s))
    for b in builders.values():
        words.extend(b.finish())
    return words
