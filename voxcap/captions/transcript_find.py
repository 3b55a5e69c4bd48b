"""Where a search hit (``captions.search``) is in a session's transcript as Previous sessions
shows it (``export.render``'s TXT with timestamps), so that opening a hit shows its words.

    mode = transcript_mode(session)                   # "both" when every line has its record
    text = render(session, ".txt", timestamps=True, translation=mode)[0]
    span = match_span(text, hit, occurrence(hits, hit), set(session.labels.values()))

The transcript is paragraphs ("[00:01:05] Them: words", the label only with two speakers or
more); with translations ("both") each paragraph is one finished line and its translation
follows on lines of its own, indented. A hit is found as the n-th place its words are said by
its speaker in its text (the original or a translation), n counted among the search's own hits:
both run through the same words in the same order. Where the words cannot be found (masked
since), the paragraph said at the hit's time is given instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .search import SearchHit

_STAMP = re.compile(r"\[(\d+):(\d\d):(\d\d)\] ")
TRANSLATION_INDENT = "    "  # export._render_lines' continuation lines


def transcript_mode(session) -> str:
    """"both" when the session has translations and a line record for every word said (a line
    dropped while translation could not keep up has none: then the words as heard, all of them)."""
    lines = getattr(session, "lines", [])
    if not any(ln.translation for ln in lines):
        return "original"
    recorded = sum(len(ln.text.split()) for ln in lines)
    return "both" if recorded >= len(session.words()) else "original"


def occurrence(hits: Iterable[SearchHit], hit: SearchHit) -> int:
    """How many of ``hits`` before ``hit`` are the same words by the same speaker in the same
    text of the same session (``hits`` in the search's order)."""
    n = 0
    for h in hits:
        if h is hit:
            return n
        if (h.session_id, h.label, h.target) == (hit.session_id, hit.label, hit.target) \
                and h.matched.casefold() == hit.matched.casefold():
            n += 1
    return n


def _segments(text: str, labels: set[str]):
    """(start offset, body, label, translated, paragraph start seconds) per transcript line."""
    pos, label, seconds = 0, "", 0.0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\n")
        if line.startswith(TRANSLATION_INDENT):
            yield pos + len(TRANSLATION_INDENT), line[len(TRANSLATION_INDENT):], label, True, seconds
        else:
            at = 0
            if m := _STAMP.match(line):
                seconds = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
                at = m.end()
            label = ""
            head, sep, _ = line[at:].partition(": ")
            if sep and head in labels:
                label, at = head, at + len(head) + 2
            yield pos + at, line[at:], label, False, seconds
        pos += len(raw)


def match_span(text: str, hit: SearchHit, nth: int = 0,
               labels: set[str] | None = None) -> tuple[int, int] | None:
    """(start, end) in ``text`` of ``hit``'s words, else of the paragraph said at its time;
    None for an empty transcript."""
    words = hit.matched.split()
    needle = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE) if words else None
    found: list[tuple[int, int]] = []
    said_then: tuple[int, int] | None = None
    for start, body, label, translated, seconds in _segments(text, labels or set()):
        if label and label != hit.label:
            continue
        if not translated and (said_then is None or seconds <= hit.at_s):
            said_then = (start, start + len(body))
        if translated != bool(hit.target) or needle is None:
            continue
        found += [(start + m.start(), start + m.end()) for m in needle.finditer(body)]
        if len(found) > nth:
            return found[nth]
    return found[-1] if found else said_then
