"""Words -> subtitle cues and transcript paragraphs, timed from the words' audio spans.

- ``prepare_words(words, masker=None) -> list[Word]``: glue pieces joined to their word,
  masking applied (exports mask here; the journal never is).
- ``build_cues(words, labels=None, show_labels=False, end_s=None, options=CueOptions())
  -> list[Cue]``: cues of at most ``max_lines`` lines of ``max_chars`` columns, at most
  ``max_duration_s`` long; a pause of ``pause_s`` or the end of a sentence (once the cue
  holds half a line) starts a new cue. Times are integer milliseconds; each speaker's cues
  obey ``0 <= start < end``, starts strictly increasing, ``end <= next start`` (never over the
  same speaker's next cue) and ``end <= end_s`` (the audio's length): the audio's clock rules.
  Each speaker is timed on its own: two people talking at once get overlapping cues, each
  labelled, as players show them (stacked; WebVTT allows it, SRT players show both), instead
  of one timeline cutting both into cues of a tenth of a second that alternate. The list is
  ordered by start.
  Timing follows broadcast subtitle practice (BBC, Netflix guidelines): a cue stays up at
  least ``min_duration_s`` and long enough to read its text at ``max_chars_per_s``; for that
  the following cues are delayed, by at most ``max_delay_s`` behind the speech. Text faster
  than that can be shown (more than a cue a second for long: two people at once, or a model
  that emits more than anyone says) does not push the cues ever later: a cue never starts
  more than ``max_delay_s`` after its words, and the one before it gives way, below its
  minimum if it must. When the silence after a cue allows, it stays up long enough to read
  at the gentler ``chars_per_s``. (Merging short cues was tried: cues are only
  split at pauses, sentence ends, full lines and the maximum duration, so merging would show
  text before a pause or join sentences; a short delay reads better.) Only at the very end of
  the audio (text flushed with no duration) is a cue moved back into the silence before it.
- ``build_paragraphs(words, labels=None, pause_s=1.5) -> list[Paragraph]``: for TXT; a
  new paragraph after a pause, where another speaker takes a turn (a sentence ended after
  the other spoke, or the other said ``turn_words`` words meanwhile), at a sentence end once
  the paragraph spans ``soft_max_s``, and in any case at ``hard_max_s``. Paragraphs of
  several streams are ordered by start, so a conversation reads in its turns.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

from .linebreak import display_width, wrap_words
from .masking import Masker
from .words import Word, ends_sentence

MIN_CUE_MS = 100  # last resort only (a zero-length cue is invalid); min_duration_s rules


@dataclass(frozen=True)
class CueOptions:
    max_chars: int = 42
    max_lines: int = 2
    max_duration_s: float = 7.0
    min_duration_s: float = 1.0
    chars_per_s: float = 17.0  # extend up to this reading speed when the silence allows
    max_chars_per_s: float = 20.0  # never faster: later cues wait (up to max_delay_s)
    max_delay_s: float = 3.0
    pause_s: float = 0.8


@dataclass
class Cue:
    start_ms: int
    end_ms: int
    lines: tuple[str, ...]
    stream_id: str
    label: str  # the speaker shown in front of the first line ("" when labels are off)
    text_lines: tuple[str, ...] = ()  # the lines without the label

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Paragraph:
    stream_id: str
    label: str
    start_s: float
    end_s: float
    text: str


def prepare_words(words: Iterable[Word], masker: Masker | None = None) -> list[Word]:
    merged: list[Word] = []
    last: dict[str, int] = {}  # stream -> index of its last word in merged
    for w in words:
        i = last.get(w.stream_id)
        if w.glue and i is not None:
            prev = merged[i]
            merged[i] = Word(prev.stream_id, prev.text + w.text, prev.start_s,
                             max(prev.end_s, w.end_s))
            continue
        last[w.stream_id] = len(merged)
        merged.append(Word(w.stream_id, w.text, w.start_s, w.end_s))
    if masker is not None:
        merged = [Word(w.stream_id, masker.mask_word(w.text), w.start_s, w.end_s) for w in merged]
    return merged


def _by_stream(words: Iterable[Word]) -> dict[str, list[Word]]:
    out: dict[str, list[Word]] = {}
    for w in words:
        out.setdefault(w.stream_id, []).append(w)
    return out


def _chunk(words: list[Word], prefix: str, o: CueOptions) -> list[list[Word]]:
    chunks: list[list[Word]] = []
    cur: list[Word] = []
    for w in words:
        if cur:
            texts = [prefix + cur[0].text] + [x.text for x in cur[1:]] + [w.text]
            width = display_width(" ".join(texts[:-1]))
            if (w.start_s - cur[-1].end_s >= o.pause_s
                    or w.end_s - cur[0].start_s > o.max_duration_s
                    or (ends_sentence(cur[-1].text) and width >= o.max_chars // 2)
                    or len(wrap_words(texts, o.max_chars)) > o.max_lines):
                chunks.append(cur)
                cur = []
        cur.append(w)
    if cur:
        chunks.append(cur)
    return chunks


def _reading_ms(chars: int, cps: float, o: CueOptions) -> int:
    return max(round(o.min_duration_s * 1000), math.ceil(1000 * chars / cps))


def build_cues(words: Iterable[Word], labels: dict[str, str] | None = None,
               show_labels: bool = False, end_s: float | None = None,
               options: CueOptions | None = None) -> list[Cue]:
    o = options or CueOptions()
    labels = labels or {}
    speakers = [_speaker_cues(sid, stream_words, labels, show_labels, o)
                for sid, stream_words in _by_stream(prepare_words(words)).items()]
    # without the audio's length, the last cue may stay up as long as it needs to be read
    limit = (round(end_s * 1000) if end_s is not None
             else max((c.end_ms for own in speakers for c in own), default=0)
             + round(o.max_duration_s * 1000))
    for own in speakers:  # each speaker on its own clock: two at once may overlap
        _time(own, limit, o)
    order = {own[0].stream_id: n for n, own in enumerate(speakers) if own}
    return sorted((c for own in speakers for c in own),
                  key=lambda c: (c.start_ms, order[c.stream_id]))


def _speaker_cues(sid: str, stream_words: list[Word], labels: dict[str, str],
                  show_labels: bool, o: CueOptions) -> list[Cue]:
    """One speaker's cues, at their words' times (``_time`` makes them readable)."""
    max_ms = round(o.max_duration_s * 1000)
    label = (labels.get(sid) or sid) if show_labels else ""
    prefix = f"{label}: " if label else ""
    cues = []
    for chunk in _chunk(stream_words, prefix, o):
        text_lines = wrap_words([prefix + chunk[0].text] + [w.text for w in chunk[1:]],
                                o.max_chars)
        if prefix:
            text_lines[0] = text_lines[0][len(prefix):]
        lines = tuple(text_lines)  # > max_lines only for one word longer than a cue
        start = round(chunk[0].start_s * 1000)
        end = round(max(w.end_s for w in chunk) * 1000)
        start = max(start, end - max_ms)
        cues.append(Cue(start, end, tuple((prefix if i == 0 else "") + t
                                          for i, t in enumerate(lines)), sid, label, lines))
    cues.sort(key=lambda c: c.start_ms)
    return cues


def _time(cues: list[Cue], limit_ms: int, o: CueOptions) -> None:
    min_ms = round(o.min_duration_s * 1000)
    max_ms = round(o.max_duration_s * 1000)
    delay_ms = round(o.max_delay_s * 1000)
    spoken = [c.start_ms for c in cues]  # when each cue's first word was said
    prev = None
    for i, c in enumerate(cues):  # forward: readable, later cues wait for it (a while)
        # a wait only while the audio left has room for the cues left, a second each: text
        # faster than that shares the time as it was spoken
        late_ms = max(0, min(delay_ms, limit_ms - spoken[i] - (len(cues) - i) * min_ms))
        start = min(max(spoken[i], prev.end_ms if prev else 0), spoken[i] + late_ms)
        if prev is not None:  # too far behind the speech: the cue before gives way
            start = max(start, prev.start_ms + MIN_CUE_MS)
            prev.end_ms = min(prev.end_ms, start)
        chars = sum(display_width(t) for t in c.lines)
        hard = _reading_ms(chars, o.max_chars_per_s, o)
        soft = _reading_ms(chars, o.chars_per_s, o)
        next_spoken = spoken[i + 1] if i + 1 < len(cues) else limit_ms
        end = max(c.end_ms, start + hard, min(start + soft, next_spoken))
        c.start_ms, c.end_ms = start, min(end, start + max(max_ms, hard))
        prev = c
    latest = limit_ms
    for i in range(len(cues) - 1, -1, -1):  # backward: nothing past the end of the audio
        c = cues[i]
        if c.end_ms <= latest and c.start_ms + MIN_CUE_MS <= latest:
            break
        c.end_ms = min(c.end_ms, latest)
        free = cues[i - 1].end_ms if i else 0  # before its words only into the silence there
        c.start_ms = min(c.start_ms, max(min(spoken[i], free), c.end_ms - min_ms),
                         c.end_ms - MIN_CUE_MS)
        latest = c.start_ms
    for prev, c in itertools.pairwise(cues):  # strictly increasing starts, no overlaps
        c.start_ms = max(c.start_ms, prev.start_ms + MIN_CUE_MS)
        prev.end_ms = min(prev.end_ms, c.start_ms)
    for c in cues:
        c.start_ms = max(0, c.start_ms)
        c.end_ms = max(c.end_ms, c.start_ms + MIN_CUE_MS)


def build_paragraphs(words: Iterable[Word], labels: dict[str, str] | None = None,
                     pause_s: float = 1.5, soft_max_s: float = 30.0,
                     hard_max_s: float = 120.0, turn_words: int = 4) -> list[Paragraph]:
    labels = labels or {}
    prepared = prepare_words(words)
    groups: list[list[Word]] = []
    open_group: dict[str, list[Word]] = {}  # stream -> its paragraph so far
    others = dict.fromkeys(_by_stream(prepared), 0)  # others' words since the stream's last
    for w in sorted(prepared, key=lambda x: x.start_s):  # in time order: turns can be seen
        cur = open_group.get(w.stream_id)
        if cur is None or _paragraph_ends(cur, w, others[w.stream_id], pause_s, soft_max_s,
                                          hard_max_s, turn_words):
            cur = open_group[w.stream_id] = []
            groups.append(cur)
        cur.append(w)
        for sid in others:
            others[sid] = 0 if sid == w.stream_id else others[sid] + 1
    paras = [Paragraph(g[0].stream_id, labels.get(g[0].stream_id) or g[0].stream_id,
                       g[0].start_s, g[-1].end_s, " ".join(w.text for w in g)) for g in groups]
    paras.sort(key=lambda p: p.start_s)
    return paras


def _paragraph_ends(cur: list[Word], w: Word, others_since: int, pause_s: float,
                    soft_max_s: float, hard_max_s: float, turn_words: int) -> bool:
    """Whether ``w`` starts a new paragraph of its speaker rather than continuing ``cur``."""
    span = w.end_s - cur[0].start_s
    sentence_end = ends_sentence(cur[-1].text)
    return (w.start_s - cur[-1].end_s >= pause_s or span > hard_max_s
            or (span > soft_max_s and sentence_end)
            or others_since >= turn_words  # the other one took a turn meanwhile
            or (others_since > 0 and sentence_end))
