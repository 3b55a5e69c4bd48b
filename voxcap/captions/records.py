"""The journal's record format (JSON Lines, UTF-8, one record per line), shared by the
writer (``journal``) and the reader (``sessions``).

    {"type":"stream","session":S,"stream":ID,"label":"You","source":"mic","wall":T}
    {"type":"delta","session":S,"stream":ID,"index":K,"start":0.24,"end":0.32,"wall":T,
     "text":" w17","tokens":[123]}           # + "said":" w71" where the word list changed
                                            #   the model's text ("text": what was shown)
    {"type":"end","session":S,"stream":ID,"reason":"flushed","audio_seconds":12.3,"wall":T}
    {"type":"gap","session":S,"dropped":N,"wall":T}   # records lost while the disk failed
    {"type":"rollover","session":S,"stream":ID,"engine_session":N,"at":61.28,
     "reason":"pause","lost":0.0,"wall":T}   # the stream continued in a fresh engine session
    {"type":"pause","session":S,"wall":T}    # captioning paused: nothing captured until
    {"type":"resume","session":S,"wall":T}   # it resumed (same session, new streams)
    {"type":"line","session":S,"stream":ID,"line":N,"start":0.24,"end":2.1,"text":"...",
     "lang":"fr","to":"en","translation":"...","wall":T}   # a finished line's language and
                                                          # translation (voxcap.translate);
     ... ,"refined":true}    # again: its share of its sentence's translation, read in its place

``start``/``end`` are seconds of the stream's audio, ``wall`` is Unix time. Readers ignore
unknown types and unknown keys (forward compatible).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

JOURNAL_NAME = "journal.jsonl"
SESSION_NAME = "session.json"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class DeltaRecord:
    """A journalled delta; same attribute names as ``voxcap.events.TextDelta``."""

    session_id: str
    stream_id: str
    index: int
    audio_start_s: float
    audio_end_s: float
    produced_at: float
    text: str
    token_ids: tuple[int, ...] = ()
    said: str | None = None  # the model's own text where the word list changed it


@dataclass(frozen=True)
class StreamRecord:
    session_id: str
    stream_id: str
    label: str
    source: str
    wall: float


@dataclass(frozen=True)
class EndRecord:
    session_id: str
    stream_id: str
    reason: str
    audio_seconds: float
    wall: float


@dataclass(frozen=True)
class GapRecord:
    session_id: str
    dropped: int
    wall: float


@dataclass(frozen=True)
class RolloverRecord:
    """A stream continued in a fresh engine session at ``at_audio_s`` (see SessionRolled)."""

    session_id: str
    stream_id: str
    engine_session: int
    at_audio_s: float
    reason: str
    lost_s: float
    wall: float


@dataclass(frozen=True)
class PauseRecord:
    """Captioning paused (``resumed`` False) or resumed at ``wall``."""

    session_id: str
    resumed: bool
    wall: float


@dataclass(frozen=True)
class LineRecord:
    """A finished line's language and translation (``events.LineTranslated``), journalled
    (``refined``: its share of its sentence's translation, which replaces its own on load)."""

    session_id: str
    stream_id: str
    line_id: int
    start_s: float
    end_s: float
    text: str
    language: str
    target: str
    translation: str
    wall: float
    refined: bool = False


def _line(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


DELTA_PREFIX = b'{"type":"delta",'  # how delta_line's records start


def delta_line(session_id: str, d) -> bytes:
    record = {"type": "delta", "session": session_id, "stream": d.stream_id,
              "index": d.index, "start": round(d.audio_start_s, 3),
              "end": round(d.audio_end_s, 3), "wall": round(d.produced_at, 3),
              "text": d.text, "tokens": list(d.token_ids)}
    said = getattr(d, "said", None)
    if said is not None:
        record["said"] = said
    return _line(record)


def stream_line(session_id: str, stream_id: str, label: str, source: str, wall: float) -> bytes:
    return _line({"type": "stream", "session": session_id, "stream": stream_id, "label": label,
                  "source": source, "wall": round(wall, 3)})


def end_line(session_id: str, stream_id: str, reason: str, audio_seconds: float,
             wall: float) -> bytes:
    return _line({"type": "end", "session": session_id, "stream": stream_id, "reason": reason,
                  "audio_seconds": round(audio_seconds, 3), "wall": round(wall, 3)})


def gap_line(session_id: str, dropped: int, wall: float) -> bytes:
    return _line({"type": "gap", "session": session_id, "dropped": dropped,
                  "wall": round(wall, 3)})


def rollover_line(session_id: str, ev) -> bytes:
    return _line({"type": "rollover", "session": session_id, "stream": ev.stream_id,
                  "engine_session": ev.session, "at": round(ev.at_audio_s, 3),
                  "reason": ev.reason, "lost": round(ev.lost_s, 3), "wall": round(ev.wall, 3)})


def pause_line(session_id: str, resumed: bool, wall: float) -> bytes:
    return _line({"type": "resume" if resumed else "pause", "session": session_id,
                  "wall": round(wall, 3)})


def line_line(session_id: str, ev, wall: float) -> bytes:
    return _line({"type": "line", "session": session_id, "stream": ev.stream_id,
                  "line": ev.line_id, "start": round(ev.start_s, 3), "end": round(ev.end_s, 3),
                  "text": ev.text, "lang": ev.language, "to": ev.target,
                  "translation": ev.translation, "wall": round(wall, 3),
                  **({"refined": True} if ev.refined else {})})


def parse_record(obj) -> (DeltaRecord | StreamRecord | EndRecord | GapRecord | RolloverRecord
                          | PauseRecord | LineRecord | None):
    """A decoded JSON value -> record; None for an unknown type; ValueError if malformed."""
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    kind = obj.get("type")
    try:
        if kind == "delta":
            text = obj["text"]
            if not isinstance(text, str):
                raise ValueError("text is not a string")
            start, end = float(obj["start"]), float(obj["end"])
            if not (0 <= start <= end < 1e7):
                raise ValueError(f"bad audio span {start}..{end}")
            said = obj.get("said")
            return DeltaRecord(str(obj.get("session", "")), str(obj["stream"]), int(obj["index"]),
                               start, end, float(obj.get("wall", 0.0)), text,
                               tuple(int(t) for t in obj.get("tokens") or ()),
                               said if isinstance(said, str) else None)
        if kind == "stream":
            return StreamRecord(str(obj.get("session", "")), str(obj["stream"]),
                                str(obj.get("label") or ""), str(obj.get("source") or ""),
                                float(obj.get("wall", 0.0)))
        if kind == "end":
            return EndRecord(str(obj.get("session", "")), str(obj["stream"]),
                             str(obj.get("reason") or ""), float(obj.get("audio_seconds") or 0),
                             float(obj.get("wall", 0.0)))
        if kind == "gap":
            return GapRecord(str(obj.get("session", "")), int(obj.get("dropped") or 0),
                             float(obj.get("wall", 0.0)))
        if kind == "rollover":
            return RolloverRecord(str(obj.get("session", "")), str(obj["stream"]),
                                  int(obj["engine_session"]), float(obj["at"]),
                                  str(obj.get("reason") or ""), float(obj.get("lost") or 0.0),
                                  float(obj.get("wall", 0.0)))
        if kind == "line":
            return LineRecord(str(obj.get("session", "")), str(obj["stream"]), int(obj["line"]),
                              float(obj["start"]), float(obj["end"]), str(obj.get("text") or ""),
                              str(obj.get("lang") or ""), str(obj.get("to") or ""),
                              str(obj.get("translation") or ""), float(obj.get("wall", 0.0)),
                              obj.get("refined") is True)
        if kind in ("pause", "resume"):
            return PauseRecord(str(obj.get("session", "")), kind == "resume", float(obj["wall"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"missing or invalid field {exc}") from None
    return None
