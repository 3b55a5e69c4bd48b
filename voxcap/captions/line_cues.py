"""Cues and paragraphs from finished lines with their language and translation (the journal's
``line`` records, ``events.LineTranslated``), for exports that show a translation.

    settled(lines)                              # one per line: its sentence's share over its own
    translated_cues(lines, "both", options)     # one cue per line: the original, then the
                                                # translation (or the translation alone)
    language_at(lines, stream_id, t_s)          # the language of the line heard then, for a
                                                # cue built from words (VTT ``<lang>``)

A line's cue spans its audio; it stays up at least ``min_duration_s`` unless the next line
starts sooner, and never overlaps the next cue (times in integer ms, strictly increasing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from .cues import Cue, CueOptions
from .linebreak import wrap_words

MODES = ("original", "translation", "both")


class _Translated(Protocol):
    @property
    def stream_id(self) -> str: ...

    @property
    def start_s(self) -> float: ...

    @property
    def refined(self) -> bool: ...


L = TypeVar("L", bound=_Translated)


def language_at(lines: Iterable, stream_id: str, t_s: float) -> str:
    """The language of the stream's line whose span holds ``t_s`` (or ends nearest before)."""
    best, best_end = "", -1.0
    for line in lines:
        if line.stream_id != stream_id or not line.language:
            continue
        if line.start_s <= t_s <= line.end_s:
            return line.language
        if line.end_s <= t_s and line.end_s > best_end:
            best, best_end = line.language, line.end_s
    return best


def settled(lines: Iterable[L]) -> list[L]:
    """One record per line (stream and start time), in the order the lines first came: a line
    of a sentence over several comes twice, translated alone and then with its share of the
    sentence's translation (``refined``), which takes the first's place."""
    kept: dict[tuple[str, float], L] = {}
    for line in lines:
        key = (line.stream_id, round(line.start_s, 3))
        old = kept.get(key)
        if old is None or line.refined or not old.refined:
            kept[key] = line
    return list(kept.values())


def _wrap(text: str, width: int) -> list[str]:
    return wrap_words(text.split(), width) if text.strip() else []


def translated_cues(lines: Iterable, mode: str, options: CueOptions | None = None,
                    labels: dict[str, str] | None = None) -> list[tuple[Cue, list[str]]]:
    """(cue, the language of each of its text lines) per finished line, in time order."""
    opt = options or CueOptions()
    ordered = sorted(settled(lines), key=lambda ln: (ln.start_s, ln.line_id))
    out: list[tuple[Cue, list[str]]] = []
    for n, line in enumerate(ordered):
        texts: list[str] = []
        langs: list[str] = []
        if mode == "both" or not line.translation:
            original = _wrap(line.text, opt.max_chars)
            texts += original
            langs += [line.language] * len(original)
        if line.translation and mode in ("both", "translation"):
            translated = _wrap(line.translation, opt.max_chars)
            texts += translated
            langs += [line.target] * len(translated)
        if not texts:
            continue
        start = int(round(line.start_s * 1000))
        if out and start <= out[-1][0].start_ms:
            start = out[-1][0].start_ms + 1
        end = max(int(round(line.end_s * 1000)), start + int(opt.min_duration_s * 1000))
        if n + 1 < len(ordered):
            end = min(end, max(int(round(ordered[n + 1].start_s * 1000)), start + 1))
        if out and out[-1][0].end_ms > start:
            out[-1][0].end_ms = start
        label = (labels or {}).get(line.stream_id, "")
        out.append((Cue(start, end, tuple(texts), line.stream_id, label, tuple(texts)), langs))
    return out
