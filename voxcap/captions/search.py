"""Search every saved session (the day's, or all) for a word or a phrase.

    hits = search_sessions("budget", since=start_of_day())   # SessionStore's folder
    for h in hits:                                           # oldest session first
        print(h.session_id, h.label, h.at_s, h.wall, h.line[h.start:h.end])

A hit names its session, the speaker, where the words are on the session's timeline (seconds
of its audio, ``Session.timeline``: one clock per speaker across restarts and pauses), when
they were captioned (Unix time) and the caption line they are in (the words between pauses
and sentence ends, at most ``LINE_CHARS`` characters). Matching ignores case and runs of
spaces; a phrase may span subword pieces and the engine's deltas, not lines.

Translations (the journal's ``line`` records) are searched as well, each speaker's in each
target language as one text in time order; a hit in one says so (``target``: the language it
was translated into; "" for the words as heard).

Only the deltas with text are decoded (most of an engine's steps carry none), so a day of
captions is searched in well under a second (``benchmarks/search_bench.py``).
"""

from __future__ import annotations

import bisect
import collections
import itertools
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .records import JOURNAL_NAME
from .sessions import Session, SessionInfo, SessionStore, read_session_dir
from .words import clean_piece, ends_sentence

LINE_CHARS = 120  # a result line: about what a two-line caption and a half holds
LINE_PAUSE_S = 1.0  # a pause this long ends a line


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    session_created: float  # Unix time the session started
    label: str  # who spoke ("Them", "You", a file's name)
    at_s: float  # where the match starts on the session's timeline (seconds of its audio)
    wall: float  # Unix time the matched words were captioned
    line: str  # the caption line holding the match
    start: int  # the match is line[start:end]
    end: int
    target: str = ""  # the match is in the translation into this language ("": as heard)

    @property
    def matched(self) -> str:
        return self.line[self.start:self.end]


def start_of_day(t: float | None = None) -> float:
    """Local midnight before ``t`` (now): ``since`` for the day's sessions."""
    lt = time.localtime(time.time() if t is None else t)
    return time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, 0, 0, 0, 0, 0, -1))


def search_sessions(query: str, root: str | Path | None = None, *, since: float | None = None,
                    limit: int | None = 1000) -> list[SearchHit]:
    """Every place ``query`` was captioned in the sessions under ``root`` that started at or
    after ``since`` (all without), oldest session first, at most ``limit`` (None: all)."""
    needle = _normal(query)
    if not needle:
        return []
    infos = [i for i in SessionStore(root).list() if since is None or i.created >= since]
    hits: list[SearchHit] = []
    for info in reversed(infos):
        hits.extend(_prepared(info).find(needle))
        if limit is not None and len(hits) >= limit:
            return hits[:limit]
    return hits


def search_session(session: Session, query: str) -> list[SearchHit]:
    """The places ``query`` was captioned in one session, in timeline order."""
    needle = _normal(query)
    if not needle:
        return []
    streams: dict[str, _Stream] = {}
    for r in session.records:
        st = streams.get(r.stream_id) or streams.setdefault(r.stream_id, _Stream())
        st.add(r.audio_start_s, r.audio_end_s, r.produced_at, r.text)
    return _SessionText(session, streams, _translations(session.lines)).find(needle)


def _translations(lines) -> dict[tuple[str, str], _Stream]:
    """Each stream's translations into each language (``LineRecord``s), one text per pair."""
    out: dict[tuple[str, str], _Stream] = {}
    for ln in sorted(lines, key=lambda ln: (ln.start_s, ln.line_id)):
        if ln.translation.strip() and ln.target:
            st = out.get((ln.stream_id, ln.target)) or out.setdefault((ln.stream_id, ln.target),
                                                                        _Stream())
            st.add(ln.start_s, ln.end_s, ln.wall, " " + clean_piece(ln.translation).strip())
    return out


class _SessionText:
    """A session's streams ready to search: each speaker's offset on the session's timeline."""

    def __init__(self, session: Session, streams: dict[str, _Stream],
                 translations: dict[tuple[str, str], _Stream] | None = None) -> None:
        self.session_id, self.created = session.session_id, session.info.created
        translations = translations or {}
        last_end = {sid: st.ends[-1] for (sid, _), st in translations.items()}
        last_end.update({sid: st.ends[-1] for sid, st in streams.items()})
        shift, _ = session.speaker_offsets(last_end)
        self.streams = [(session.labels.get(sid) or sid, shift[sid][1], "", st.ready())
                        for sid, st in streams.items()]
        self.streams += [(session.labels.get(sid) or sid, shift[sid][1], target, st.ready())
                         for (sid, target), st in translations.items()]

    def find(self, needle: str) -> list[SearchHit]:
        hits = []
        for label, offset, target, stream in self.streams:
            for piece, (line, start, end) in _find(stream, needle):
                hits.append(SearchHit(self.session_id, self.created, label,
                                      stream.audio[piece] + offset, stream.walls[piece], line,
                                      start, end, target))
        hits.sort(key=lambda h: h.at_s)
        return hits


_cache: collections.OrderedDict = collections.OrderedDict()  # (folder, size, mtime) -> text
CACHED_SESSIONS = 64  # a day's sessions and more: searching again as one types is instant


def _prepared(info: SessionInfo) -> _SessionText:
    """A session's text, read once while its journal stays the same (size and time)."""
    key = (info.path, info.journal_bytes, info.last_write)
    text = _cache.get(key)
    if text is None:
        text = _cache[key] = _read(info.path)
        while len(_cache) > CACHED_SESSIONS:
            _cache.popitem(last=False)
    _cache.move_to_end(key)
    return text


class _Stream:
    """A stream's text as one string (pieces cleaned, joined as captured), folded for matching
    piece by piece so that positions map back to the pieces."""

    def __init__(self) -> None:
        self.audio: list[float] = []  # where each piece's audio starts and ends
        self.ends: list[float] = []
        self.walls: list[float] = []  # when each was captioned
        self.pieces: list[str] = []

    def add(self, start_s: float, end_s: float, wall: float, text: str) -> None:
        self.audio.append(start_s)
        self.ends.append(end_s)
        self.walls.append(wall)
        self.pieces.append(clean_piece(text))

    def ready(self) -> _Stream:
        folded = [_fold(p) for p in self.pieces]
        self.starts = list(itertools.accumulate((len(p) for p in folded), initial=0))
        self.folded = "".join(folded)
        return self

    def piece_at(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos) - 1

    def line_around(self, first: int, last: int) -> tuple[str, int, int]:
        """The caption line holding pieces ``first``..``last``: out to a pause, a sentence's
        end or ``LINE_CHARS`` in all; (line, where the first and the last piece start in it)."""
        budget = LINE_CHARS - sum(len(self.pieces[i]) for i in range(first, last + 1))
        lo, hi = first, last
        while lo > 0 and budget > 0 and not self._break_before(lo):
            lo -= 1
            budget -= len(self.pieces[lo])
        while hi + 1 < len(self.pieces) and budget > 0 and not self._break_before(hi + 1):
            hi += 1
            budget -= len(self.pieces[hi])
        while lo < first and not self.pieces[lo].startswith(" "):  # whole words only
            lo += 1
        while hi > last and hi + 1 < len(self.pieces) and not self.pieces[hi + 1].startswith(" "):
            hi -= 1
        text = "".join(self.pieces[lo:hi + 1])
        lead = len(text) - len(text.lstrip())
        return text.strip(), lead, sum(len(p) for p in self.pieces[lo:first]) - lead

    def _break_before(self, i: int) -> bool:
        """A new line starts at piece ``i``: after a pause or a sentence's end."""
        if self.audio[i] - self.ends[i - 1] >= LINE_PAUSE_S:
            return True
        return self.pieces[i].startswith(" ") and ends_sentence(self.pieces[i - 1].rstrip())


def _find(stream: _Stream, needle: str):
    """(index of the piece a match starts in, (line, start, end) of the match in its line)."""
    pos = stream.folded.find(needle)
    while pos >= 0:
        first, last = stream.piece_at(pos), stream.piece_at(pos + len(needle) - 1)
        line, lead, first_at = stream.line_around(first, last)
        start = first_at + pos - stream.starts[first]
        yield first, (line, start, start + len(needle))
        pos = stream.folded.find(needle, pos + len(needle))


# a delta with text as records.delta_line writes it (its keys in that order); the stream id
# and the text are JSON strings, decoded only when they hold an escape
_NO_TEXT = b'"text":""'
_DELTA = re.compile(rb'\{"type":"delta","session":"[^"\n]*","stream":"((?:[^"\\\n]|\\.)*)",'
                    rb'"index":-?\d+,"start":([-0-9.eE+]+),"end":([-0-9.eE+]+),"wall":([-0-9.eE+]+),'
                    rb'"text":"((?:[^"\\\n]|\\.)+)"')


def _read(directory: Path) -> _SessionText:
    """The session's deltas that carry text (most of a session's steps carry none), read
    straight from the bytes: decoding each line as JSON took ~20 µs."""
    session = read_session_dir(directory, deltas=False)  # its line records too: few
    streams: dict[bytes, _Stream] = {}
    try:
        data = (directory / JOURNAL_NAME).read_bytes()
    except OSError:
        data = b""
    for line in data.split(b"\n"):
        if _NO_TEXT in line or (m := _DELTA.match(line)) is None:
            continue
        st = streams.get(m[1]) or streams.setdefault(m[1], _Stream())
        st.add(float(m[2]), float(m[3]), float(m[4]), _string(m[5]))
    return _SessionText(session, {_string(sid): st for sid, st in streams.items()},
                        _translations(session.lines))


def _string(raw: bytes) -> str:
    return json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8", "replace")


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _fold(piece: str) -> str:
    """Case folded where that keeps the piece's length (positions map back to the text)."""
    for folded in (piece.casefold(), piece.lower()):
        if len(folded) == len(piece):
            return folded
    return piece
