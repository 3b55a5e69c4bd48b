"""Exports people can use: SRT, WebVTT, TXT (plain or timestamped) and JSONL.

    export(source, "talk.srt")                 # format from the extension
    export(session, "talk.txt", timestamps=True, masker=make_masker(True))
    text = render(source, ".vtt")              # the file's content, without writing it
    default_name(session)                      # "captions 2026-12-03 09-14.srt"

``source``: a ``sessions.Session`` (labels and audio length come from it), or any iterable
of deltas (``TextDelta`` or ``DeltaRecord``); then give ``labels`` (stream id -> label) and
``end_s`` (the audio's length, caps cue times) if known.

- ``.srt``: numbered cues ``HH:MM:SS,mmm --> HH:MM:SS,mmm``, UTF-8, blank line between cues.
- ``.vtt``: ``WEBVTT`` header; ``&``, ``<``, ``>`` escaped; with several streams each cue is
  a voice span (``<v You>``), which players show as the speaker.
- Cue rules (``cues.CueOptions``): <= 7 s, <= 2 lines of <= 42 columns, monotonic, no
  overlaps. With several streams the label is written in front of the first line
  ("You: ...") in SRT; a right-to-left line is wrapped in RLM marks so players lay it out
  right to left even behind a left-to-right label.
- ``.txt``: paragraphs (a new one after a pause), one per line; with several streams each
  starts with its label; ``timestamps=True`` puts ``[HH:MM:SS]`` in front of each.
- ``.jsonl``: one JSON object per delta, lossless (empty steps included):
  ``{"stream","label","index","start","end","wall","text","tokens"}``. Masking is applied
  to the pieces (it keeps lengths, so a masked word stays split where it was) and drops
  ``tokens`` (they would spell the word out).
- An empty session gives a valid empty file of each format.
- ``masker`` masks words in every format (the journal keeps the real words).
- Languages and translations (``lines``: the journal's line records, a session's own by
  default; a line's share of its sentence's translation in place of its own,
  ``line_cues.settled``): ``translation="original"`` writes the words as heard, a WebVTT cue in
  the language of its line (``<lang fr>``); ``"translation"`` or ``"both"`` writes one cue (or
  paragraph) per finished line, with its translation alone or under the original
  (``line_cues``), each text line of a WebVTT cue in its language (with no translation
  recorded: as ``"original"``).
  ``language_tags``: SRT and TXT lines start with ``[fr]`` (SRT has no language markup).
  ``export(..., translation="separate")`` writes the original to the file named and each
  translation beside it (``talk.srt``, ``talk.en.srt``).
Files are written atomically and readable by their owner only, as the journal is (a new
temporary file of a random name, made exclusively, renamed over the target: ``paths.write_private``).
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .. import paths
from ..errors import ConfigError
from .cues import Cue, CueOptions, build_cues, build_paragraphs, prepare_words
from .line_cues import MODES, language_at, settled, translated_cues
from .masking import Masker
from .words import words_from_deltas

FORMATS = (".srt", ".vtt", ".txt", ".jsonl")
RLM = "\u200f"


@dataclass(frozen=True)
class ExportResult:
    path: Path | None
    fmt: str
    items: int  # cues, paragraphs or words written
    words: int


def default_name(session, suffix: str = ".srt") -> str:
    """The file name an export suggests: when the session started, in local time, as people
    find it again ("captions 2026-12-03 09-14.srt"), not its id."""
    created = session.info.created if session.info.created else time.time()
    return f"captions {time.strftime('%Y-%m-%d %H-%M', time.localtime(created))}{suffix}"


def check_export_path(path: str | Path) -> Path:
    p = Path(path).expanduser()
    fmt = p.suffix.lower()
    if fmt not in FORMATS:
        raise ConfigError(f"Unknown transcript format {p.suffix or '(none)'!r} for {p.name}",
                          f"end the file name with one of {', '.join(FORMATS)}")
    if not p.parent.is_dir():
        raise ConfigError(f"Output folder does not exist: {p.parent}",
                          "create it or pick another path")
    return p


def _gather(source, labels, end_s, timeline: bool = True):
    """(deltas, labels, end_s); a session's on its timeline (one stream per speaker, see
    ``Session.timeline``) unless ``timeline`` is False (JSONL keeps the records as written)."""
    from .sessions import Session  # late: sessions imports the journal

    if isinstance(source, Session):
        if not timeline:
            end_s = end_s if end_s is not None else source.end_s
            return source.records, {**source.labels, **(labels or {})}, end_s
        records, joined, length = source.timeline()
        return records, {**joined, **(labels or {})}, end_s if end_s is not None else length
    deltas = list(source)
    if end_s is None and deltas:
        end_s = max(d.audio_end_s for d in deltas)
    return deltas, dict(labels or {}), end_s


def render(source, fmt: str, *, labels: dict[str, str] | None = None,
           end_s: float | None = None, timestamps: bool = False, masker: Masker | None = None,
           options: CueOptions | None = None, lines: list | None = None,
           translation: str = "original", language_tags: bool = False) -> tuple[str, int, int]:
    """(file content, items, words) of ``source`` in ``fmt`` (".srt", "vtt", ...)."""
    fmt = "." + fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(f"Unknown transcript format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    if translation not in MODES:
        raise ConfigError(f"Unknown translation choice {translation!r}", f"use one of {', '.join(MODES)}")
    lines = settled(getattr(source, "lines", []) if lines is None else lines)
    if translation != "original" and fmt != ".jsonl" and any(ln.translation for ln in lines):
        return _render_lines(lines, fmt, translation, labels or getattr(source, "labels", {}),
                             masker, options, timestamps, language_tags)
    deltas, labels, end_s = _gather(source, labels, end_s, timeline=fmt != ".jsonl")
    if fmt == ".jsonl":
        return _jsonl(deltas, labels, masker), len(deltas), len(words_from_deltas(deltas))
    words = prepare_words(words_from_deltas(deltas), masker)
    speakers = {labels.get(w.stream_id) or w.stream_id for w in words}
    several = len(speakers) > 1  # labels only where there is more than one speaker
    if fmt in (".srt", ".vtt"):
        cues = build_cues(words, labels, show_labels=several and fmt == ".srt", end_s=end_s,
                          options=options)
        langs = [[language_at(lines, c.stream_id, (c.start_ms + c.end_ms) / 2000)] * len(c.lines)
                 for c in cues]
        text = (_srt(cues, langs if language_tags else None) if fmt == ".srt"
                else _vtt(cues, labels if several else None, langs))
        return text, len(cues), len(words)
    paras = build_paragraphs(words, labels)
    lines = []
    for p in paras:
        head = f"[{_clock(p.start_s)}] " if timestamps else ""
        lines.append(f"{head}{p.label}: {p.text}" if several else f"{head}{p.text}")
    return "".join(line + "\n" for line in lines), len(paras), len(words)


def export(source, path: str | Path, *, labels: dict[str, str] | None = None,
           end_s: float | None = None, timestamps: bool = False, masker: Masker | None = None,
           options: CueOptions | None = None, lines: list | None = None,
           translation: str = "original", language_tags: bool = False) -> ExportResult:
    p = check_export_path(path)
    if translation == "separate":  # NAME.srt as heard, NAME.en.srt translated
        lines = list(getattr(source, "lines", []) if lines is None else lines)
        for target in sorted({ln.target for ln in lines if ln.target}):
            export(source, p.with_name(f"{p.stem}.{target}{p.suffix}"), labels=labels, end_s=end_s,
                   timestamps=timestamps, masker=masker, options=options, translation="translation",
                   lines=[ln for ln in lines if ln.target in ("", target)],
                   language_tags=language_tags)
        translation = "original"
    text, items, nwords = render(source, p.suffix, labels=labels, end_s=end_s,
                                 timestamps=timestamps, masker=masker, options=options, lines=lines,
                                 translation=translation, language_tags=language_tags)
    try:
        paths.write_private(p, text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot write {p}: {exc.strerror}",
                          "pick a writable folder with free space") from None
    return ExportResult(p, p.suffix.lower(), items, nwords)


# ------------------------------------------------------------------- formats ----
def _clock(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def _stamp(ms: int, sep: str) -> str:
    ms = max(0, ms)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"


def _is_rtl(text: str) -> bool:
    for ch in text:
        d = unicodedata.bidirectional(ch)
        if d in ("R", "AL"):
            return True
        if d == "L":
            return False
    return False


def _bidi(text: str) -> str:
    return f"{RLM}{text}{RLM}" if _is_rtl(text) else text


def _cue_lines(cue: Cue, langs: list[str] | None = None) -> list[str]:
    lines = [_bidi(t) for t in cue.text_lines]
    if langs:
        lines = [f"[{lang}] {t}" if lang else t for t, lang in zip(lines, langs, strict=False)]
    if cue.label:
        lines[0] = f"{cue.label}: {lines[0]}"
    return lines


def _srt(cues: Iterable[Cue], langs: list[list[str]] | None = None) -> str:
    blocks = []
    for n, c in enumerate(cues, 1):
        body = "\n".join(_cue_lines(c, langs[n - 1] if langs else None))
        blocks.append(f"{n}\n{_stamp(c.start_ms, ',')} --> {_stamp(c.end_ms, ',')}\n{body}\n")
    return "\n".join(blocks)


def _vtt_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _vtt_lang(text: str, lang: str) -> str:
    return f"<lang {lang}>{text}</lang>" if lang and lang != "other" else text


def _vtt(cues: Iterable[Cue], voices: dict[str, str] | None,
         langs: list[list[str]] | None = None) -> str:
    out = ["WEBVTT\n"]
    for n, c in enumerate(cues):
        tagged = [_vtt_lang(_vtt_escape(line), lang) for line, lang in
                  zip(_cue_lines(c), langs[n] if langs else [""] * len(c.lines), strict=False)]
        body = "\n".join(tagged)
        if voices is not None:
            voice = _vtt_escape(voices.get(c.stream_id) or c.stream_id).replace("\n", " ")
            body = f"<v {voice}>{body}</v>"
        out.append(f"\n{_stamp(c.start_ms, '.')} --> {_stamp(c.end_ms, '.')}\n{body}\n")
    return "".join(out)


def _render_lines(lines: list, fmt: str, mode: str, labels: dict[str, str],
                  masker: Masker | None, options: CueOptions | None, timestamps: bool,
                  language_tags: bool) -> tuple[str, int, int]:
    """A cue (or paragraph) per finished line: its translation, alone or under the original."""
    if masker is not None:
        lines = [replace(ln, text=masker.mask_text(ln.text),
                         translation=masker.mask_text(ln.translation)) for ln in lines]
    several = len({ln.stream_id for ln in lines}) > 1
    pairs = translated_cues(lines, mode, options, labels if several and fmt != ".vtt" else None)
    cues = [c for c, _ in pairs]
    words = sum(len(ln.text.split()) for ln in lines)
    if fmt == ".srt":
        return _srt(cues, [lg for _, lg in pairs] if language_tags else None), len(cues), words
    if fmt == ".vtt":
        return _vtt(cues, labels if several else None, [lg for _, lg in pairs]), len(cues), words
    out = []
    for c, lg in pairs:
        head = f"[{_clock(c.start_ms / 1000)}] " if timestamps else ""
        parts: list[tuple[str, list[str]]] = []  # (language, its text lines): original, translation
        for t, lang in zip(c.text_lines, lg, strict=False):
            if parts and parts[-1][0] == lang:
                parts[-1][1].append(t)
            else:
                parts.append((lang, [t]))
        texts = [(f"[{lang}] " if language_tags and lang else "") + " ".join(ts) for lang, ts in parts]
        out.append(head + (f"{c.label}: " if c.label else "") + "\n    ".join(texts))
    return "".join(line + "\n" for line in out), len(cues), words


def _mask_pieces(deltas: list, masker: Masker) -> list[str]:
    """Each delta's text, masked as part of its stream's whole text (lengths are kept)."""
    texts = [d.text for d in deltas]
    by_stream: dict[str, list[int]] = {}
    for i, d in enumerate(deltas):
        by_stream.setdefault(d.stream_id, []).append(i)
    for idxs in by_stream.values():
        masked = masker.mask_text("".join(texts[i] for i in idxs))
        pos = 0
        for i in idxs:
            n = len(texts[i])
            texts[i], pos = masked[pos:pos + n], pos + n
    return texts


def _jsonl(deltas: list, labels: dict[str, str], masker: Masker | None) -> str:
    texts = _mask_pieces(deltas, masker) if masker is not None else [d.text for d in deltas]
    out = []
    for d, text in zip(deltas, texts, strict=True):
        rec = {"stream": d.stream_id, "label": labels.get(d.stream_id) or d.stream_id,
               "index": d.index, "start": round(d.audio_start_s, 3),
               "end": round(d.audio_end_s, 3), "wall": round(d.produced_at, 3), "text": text}
        if masker is None:
            rec["tokens"] = list(d.token_ids)
        out.append(json.dumps(rec, ensure_ascii=False) + "\n")
    return "".join(out)
