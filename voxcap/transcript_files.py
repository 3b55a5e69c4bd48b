"""Transcript files written from text deltas: format chosen by the file's extension.

``.txt`` is the plain text; ``.jsonl`` has one record per delta (stream, step, audio span,
wall time, text, token ids). Subtitle formats (SRT, WebVTT) come with the captions layer.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import ConfigError
from .events import TextDelta

FORMATS = (".txt", ".jsonl")


def check_output_path(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if p.suffix.lower() not in FORMATS:
        raise ConfigError(f"Unknown transcript format {p.suffix or '(none)'!r} for {p.name}",
                          f"use one of {', '.join(FORMATS)}")
    if not p.parent.exists():
        raise ConfigError(f"Output folder does not exist: {p.parent}", "create it or pick another path")
    return p


def delta_record(d: TextDelta) -> dict:
    return {"stream": d.stream_id, "index": d.index, "start": round(d.audio_start_s, 3),
            "end": round(d.audio_end_s, 3), "wall": round(d.produced_at, 3), "text": d.text,
            "tokens": list(d.token_ids)}


def write_transcript(path: str | Path, deltas: list[TextDelta]) -> Path:
    """Write ``deltas`` to ``path`` (atomically: a crash never leaves half a file)."""
    p = check_output_path(path)
    if p.suffix.lower() == ".jsonl":
        body = "".join(json.dumps(delta_record(d), ensure_ascii=False) + "\n" for d in deltas)
    else:
        streams = sorted({d.stream_id for d in deltas})
        parts = []
        for sid in streams:
            text = "".join(d.text for d in deltas if d.stream_id == sid).strip()
            parts.append(f"[{sid}] {text}" if len(streams) > 1 else text)
        body = "\n".join(parts) + "\n"
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(p)
    return p
