"""Finished caption lines -> whole sentences to translate, and a sentence's translation spread
back over its lines.

A caption line is cut at the display's width, often mid-sentence; translated alone, each piece
comes out as a broken sentence in the other language's word order. Each line is translated alone
at once all the same (a reader of live captions cannot wait), and its stream's finished lines
also wait here until one ends a sentence (anywhere in it: the start of the next sentence on the
same line goes along), to be translated again together, as the record's better translation:

    groups = SentenceGroups(hold_s=4.0)
    groups.add(line, now)        # [] while the sentence goes on; [[line1, line2]] when it ends
    groups.due(now)              # the fragments no line has followed for ``hold_s``
    groups.flush("s1")           # the stream ended: what it has, as it is
    spread("I think we should move the meeting.", [30, 12])  # ["I think we should move", "the meeting."]

A fragment whose sentence does not end within ``hold_s`` of its last line (the speaker stopped
mid-sentence), or a sentence of more than ``max_lines`` lines, goes as it is: nothing waits for
long. The translation is spread over the sentence's lines in proportion to their length, so each
line keeps one translation (every display, export and the journal match a translation to its
line by stream and start time) and the lines' translations, read in order, are the sentence's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from ..captions.words import ends_sentence

HOLD_S = 4.0  # about a caption line's time: the next line of a sentence has ended by then
MAX_LINES = 4  # two lines of the overlay, twice: the first line's translation waits ~10 s at most


class _Line(Protocol):
    @property
    def stream_id(self) -> str: ...

    @property
    def text(self) -> str: ...


L = TypeVar("L", bound=_Line)


class SentenceGroups(Generic[L]):
    def __init__(self, hold_s: float = HOLD_S, max_lines: int = MAX_LINES) -> None:
        self.hold_s = hold_s
        self.max_lines = max_lines
        self._pending: dict[str, list[L]] = {}
        self._last: dict[str, float] = {}  # stream -> when its latest pending line came

    def add(self, line: L, now: float) -> list[list[L]]:
        """A finished line; the sentences it completes (at most one)."""
        pending = self._pending.setdefault(line.stream_id, [])
        pending.append(line)
        self._last[line.stream_id] = now
        if any(ends_sentence(w) for w in line.text.split()) or len(pending) >= self.max_lines:
            return self.flush(line.stream_id)
        return []

    def due(self, now: float) -> list[list[L]]:
        """The fragments that have waited ``hold_s`` for their sentence's end."""
        late = [sid for sid, t in self._last.items() if now - t >= self.hold_s]
        return [group for sid in late for group in self.flush(sid)]

    def next_due(self) -> float | None:
        """When ``due`` next has something (None: nothing waits)."""
        return min(self._last.values()) + self.hold_s if self._last else None

    def flush(self, stream_id: str | None = None) -> list[list[L]]:
        """What the stream (every stream) has waiting, as it is."""
        sids = [stream_id] if stream_id is not None else list(self._pending)
        out = []
        for sid in sids:
            group = self._pending.pop(sid, [])
            self._last.pop(sid, None)
            if group:
                out.append(group)
        return out


def spread(translation: str, weights: Sequence[int]) -> list[str]:
    """``translation`` cut into ``len(weights)`` pieces in proportion to ``weights`` (the
    original lines' lengths), at spaces (between characters for a language written without
    them); a piece may be "" when there is less to cut than there are lines."""
    if len(weights) <= 1:
        return [translation]
    words = translation.split()
    spaced = len(words) > 1 or len(translation) < 2 * len(weights)
    units: list[str] = words if spaced else list(translation.strip())
    total = sum(max(w, 1) for w in weights)
    cuts, done = [0], 0
    for w in weights[:-1]:
        done += max(w, 1)
        cuts.append(max(cuts[-1], round(len(units) * done / total)))
    cuts.append(len(units))
    joiner = " " if spaced else ""
    return [joiner.join(units[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
