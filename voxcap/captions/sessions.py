"""Previous sessions: list them, open one (to show or export it).

A session here is one captioning run as its journal saved it, not an engine session (one
stretch of a stream inside the engine: ``engine.rollover``) nor the desktop (login) session
(``app.desktop_environment``).

    store = SessionStore()                 # root: <data dir>/sessions (or a given folder)
    for info in store.list():              # newest first: SessionInfo
        print(info.session_id, info.kind, info.created, info.interrupted, info.title)
    session = store.open("last")           # id, unique id prefix, "last", or a path
    session.records                        # DeltaRecords, journal order
    session.labels                         # stream id -> label
    session.warnings                       # lines skipped (corrupt or cut off), one per line
    session.audio_seconds                  # longest stream's audio length (from end records)
    session.timeline()                     # records on one timeline, one stream per speaker

Reading never refuses a journal because of damage: a last line cut off by a crash is
dropped (with a warning), a corrupt line anywhere is skipped with a warning naming its line
number, and everything else is kept. A missing or corrupt ``session.json`` is rebuilt from
the journal (streams, labels) and the directory name (id).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..errors import VoxcapError
from .line_cues import settled
from .records import (
    DELTA_PREFIX,
    JOURNAL_NAME,
    SESSION_NAME,
    DeltaRecord,
    EndRecord,
    GapRecord,
    LineRecord,
    PauseRecord,
    RolloverRecord,
    StreamRecord,
    parse_record,
)
from .words import Word, words_from_deltas

log = logging.getLogger(__name__)


class SessionError(VoxcapError):
    """A session cannot be found or read."""


@dataclass
class JournalContents:
    records: list[DeltaRecord] = field(default_factory=list)
    streams: dict[str, StreamRecord] = field(default_factory=dict)
    ends: dict[str, EndRecord] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dropped: int = 0  # records the writer reported lost (gap records)
    rollovers: list[RolloverRecord] = field(default_factory=list)
    pauses: list[PauseRecord] = field(default_factory=list)
    lines: list[LineRecord] = field(default_factory=list)  # languages and translations, one
    # per line (``line_cues.settled``)


def read_journal_lines(path: Path | None, extra: Iterable[bytes] = (), *,
                       deltas: bool = True) -> JournalContents:
    """Parse a journal file (and extra raw lines after it), skipping damage with warnings.
    ``deltas``: False leaves the deltas out before decoding them (a search reads them its way)."""
    out = JournalContents()
    data = b""
    if path is not None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise SessionError(f"Cannot read the journal {path}: {exc.strerror}",
                               "check the file's permissions") from None
    lines = data.split(b"\n")
    cut_off = lines.pop()  # after the last newline: empty, or a record cut off by a crash
    name = Path(path).name if path is not None else "journal"
    for n, raw in enumerate(lines, 1):
        if deltas or not raw.startswith(DELTA_PREFIX):
            _parse_into(out, raw, f"{name} line {n}")
    if cut_off.strip():
        out.warnings.append(f"{name} line {len(lines) + 1}: last record cut off "
                            f"({len(cut_off)} bytes, probably a crash); ignored")
    for raw in extra:
        _parse_into(out, raw.rstrip(b"\n"), "unwritten record")
    out.lines = settled(out.lines)
    return out


def _parse_into(out: JournalContents, raw: bytes, where: str) -> None:
    if not raw.strip():
        return
    try:
        rec = parse_record(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        out.warnings.append(f"{where}: corrupt record skipped ({str(exc)[:80]})")
        return
    if isinstance(rec, DeltaRecord):
        out.records.append(rec)
    elif isinstance(rec, StreamRecord):
        out.streams[rec.stream_id] = rec
    elif isinstance(rec, EndRecord):
        out.ends[rec.stream_id] = rec
    elif isinstance(rec, RolloverRecord):
        out.rollovers.append(rec)
        if rec.lost_s > 0:
            out.warnings.append(f"{where}: {rec.lost_s:.2f} s of stream {rec.stream_id} audio was "
                                "dropped by the engine at a session switch")
    elif isinstance(rec, PauseRecord):
        out.pauses.append(rec)
    elif isinstance(rec, LineRecord):
        out.lines.append(rec)
    elif isinstance(rec, GapRecord):
        out.dropped += rec.dropped
        out.warnings.append(f"{where}: {rec.dropped} records were lost while the disk failed")


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    path: Path
    kind: str
    title: str
    created: float  # Unix time
    ended: float | None  # None: the session did not close (crash, still running)
    settings: dict
    streams: dict  # stream id -> {"label", "source", ...}
    journal_bytes: int
    last_write: float = 0.0  # Unix time the journal was last written (its mtime)
    paused_s: float = 0.0  # time spent paused, pauses that ended
    paused_since: float | None = None  # Unix time of a pause still on (or cut off by a crash)
    pid: int | None = None  # the process that wrote it

    @property
    def interrupted(self) -> bool:
        return self.ended is None and not self.running

    @property
    def running(self) -> bool:
        """Not closed, and the process that writes it is alive (this one, or another voxcap)."""
        return self.ended is None and self.pid is not None and paths.pid_alive(self.pid)

    @property
    def state(self) -> str:
        """In words, for a list: "finished", "paused" or "in progress" (still being written),
        or "interrupted" (the app was killed or crashed before it closed the session)."""
        if self.ended is not None:
            return "finished"
        if self.running:
            return "paused" if self.paused_since is not None else "in progress"
        return "interrupted"

    @property
    def length_s(self) -> float:
        """How long it captioned: from its start to its end (an interrupted one: its journal's
        last write; one still running: now), less the time it was paused."""
        if self.ended is not None:
            end = self.ended
        elif self.running:
            end = time.time()
        else:
            end = max(self.last_write, self.created)
        paused = self.paused_s
        if self.paused_since is not None:
            paused += max(0.0, end - self.paused_since)
        return max(0.0, end - self.created - paused)

    @property
    def labels(self) -> dict[str, str]:
        return {sid: (s.get("label") or sid) for sid, s in self.streams.items()}

    def summary(self) -> SessionSummary:
        """What a list of sessions shows of it, each part in full."""
        when = time.localtime(self.created) if self.created else None
        names = ", ".join(dict.fromkeys(
            s.get("label") or Path(s.get("source") or sid).name
            for sid, s in self.streams.items() if isinstance(s, dict)))
        return SessionSummary(time.strftime("%Y-%m-%d", when) if when else "?",
                              time.strftime("%H:%M", when) if when else "?",
                              length_words(self.length_s), self.state, names, self.title)


@dataclass(frozen=True)
class SessionSummary:
    date: str  # "2026-12-03" (local time)
    time: str  # "09:14", when it started
    length: str  # "<1 min", "14 min", "1 h 05 min": the time it captioned, pauses left out
    state: str  # "finished", "in progress", "paused" or "interrupted"
    speakers: str  # "Them, You"
    title: str


def length_words(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return "<1 min"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _info(directory: Path, meta: dict | None) -> SessionInfo:
    meta = meta or {}
    journal = directory / JOURNAL_NAME
    try:
        st = journal.stat()
        size, mtime = st.st_size, st.st_mtime
    except OSError:
        size, mtime = 0, 0.0
    created = meta.get("created_unix")
    return SessionInfo(
        session_id=str(meta.get("session") or directory.name), path=directory,
        kind=str(meta.get("kind") or "?"), title=str(meta.get("title") or ""),
        created=float(created) if isinstance(created, (int, float)) else mtime,
        ended=meta.get("ended_unix") if isinstance(meta.get("ended_unix"), (int, float)) else None,
        settings=_mapping(meta.get("settings")), streams=_mapping(meta.get("streams")),
        journal_bytes=size, last_write=mtime, paused_s=_number(meta.get("paused_s")) or 0.0,
        paused_since=_number(meta.get("paused_since")),
        pid=meta["pid"] if isinstance(meta.get("pid"), int) else None)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}



def _read_meta(directory: Path) -> tuple[dict | None, str | None]:
    try:
        meta = json.loads((directory / SESSION_NAME).read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
        return meta, None
    except FileNotFoundError:
        return None, f"{SESSION_NAME} missing; rebuilt from the journal"
    except (OSError, ValueError) as exc:
        log.warning("%s unreadable", SESSION_NAME, exc_info=True)
        return None, f"{SESSION_NAME} unreadable ({str(exc)[:80]}); rebuilt from the journal"


@dataclass
class Session:
    info: SessionInfo
    records: list[DeltaRecord]
    labels: dict[str, str]
    sources: dict[str, str]
    audio_seconds: float | None  # None when no stream recorded its end
    warnings: list[str]
    rollovers: list[RolloverRecord] = field(default_factory=list)  # engine-session switches
    stream_lengths: dict[str, float] = field(default_factory=dict)  # from end records
    stream_walls: dict[str, float] = field(default_factory=dict)  # when each stream opened
    pauses: list[PauseRecord] = field(default_factory=list)  # pause and resume, in order
    lines: list[LineRecord] = field(default_factory=list)  # each finished line's language and
    # translation (voxcap.translate), in the order they were worked out

    @classmethod
    def from_contents(cls, directory: Path, meta: dict | None, contents: JournalContents,
                      warnings: Iterable[str] = ()) -> Session:
        info = _info(directory, meta)
        labels = {sid: sid for sid in dict.fromkeys(r.stream_id for r in contents.records)}
        sources = {}
        for sid, s in info.streams.items():
            if isinstance(s, dict):
                labels[sid] = s.get("label") or sid
                sources[sid] = s.get("source") or ""
        for sid, s in contents.streams.items():
            labels[sid] = s.label or labels.get(sid) or sid
            sources[sid] = s.source or sources.get(sid, "")
        ends = [e.audio_seconds for e in contents.ends.values()]
        return cls(info, contents.records, labels, sources, max(ends) if ends else None,
                   list(warnings) + contents.warnings, contents.rollovers,
                   {sid: e.audio_seconds for sid, e in contents.ends.items()},
                   {sid: s.wall for sid, s in contents.streams.items()}, contents.pauses,
                   contents.lines)

    @property
    def session_id(self) -> str:
        return self.info.session_id

    @property
    def end_s(self) -> float | None:
        """The audio's length: from end records, else the last delta's end."""
        if self.audio_seconds is not None:
            return self.audio_seconds
        return max((r.audio_end_s for r in self.records), default=None)

    def words(self) -> list[Word]:
        return words_from_deltas(self.records)

    def speaker_offsets(self, last_end: dict[str, float]) -> tuple[dict, dict]:
        """For ``timeline``: (stream id -> (its speaker's first stream id, the offset of its
        audio on that speaker's timeline), label -> the speaker's audio in all); ``last_end``:
        each stream's last audio time seen (for streams without an end record)."""
        order = list(dict.fromkeys([*sorted(self.stream_walls, key=self.stream_walls.__getitem__),
                                    *last_end]))
        first_of: dict[str, str] = {}  # label -> its first stream id
        shift: dict[str, tuple[str, float]] = {}
        done_s: dict[str, float] = {}  # label -> audio of its streams so far
        for sid in order:
            label = self.labels.get(sid) or sid
            first = first_of.setdefault(label, sid)
            offset = done_s.get(label, 0.0)
            shift[sid] = (first, offset)
            length = self.stream_lengths.get(sid, last_end.get(sid, 0.0))
            done_s[label] = offset + max(length, last_end.get(sid, 0.0))
        return shift, done_s

    def timeline(self) -> tuple[list[DeltaRecord], dict[str, str], float | None]:
        """(records, labels, end_s) with every speaker's streams joined into one.

        An engine restart (a graph-mode switch) closes a speaker's stream and opens a new one
        whose audio times start at 0 again, although its audio follows the old stream's (the
        audio captured meanwhile is held and pushed first). Here the new stream's times are
        shifted by the audio of the same speaker's earlier streams, and its records carry the
        first stream's id, so cues and paragraphs see one continuous stream per speaker.
        """
        last_end: dict[str, float] = {}
        for r in self.records:
            last_end[r.stream_id] = max(last_end.get(r.stream_id, 0.0), r.audio_end_s)
        shift, done_s = self.speaker_offsets(last_end)
        first_of = {self.labels.get(sid) or sid: first for sid, (first, _) in shift.items()}
        records = [r if shift[r.stream_id] == (r.stream_id, 0.0) else dataclasses.replace(
            r, stream_id=shift[r.stream_id][0], audio_start_s=r.audio_start_s + shift[r.stream_id][1],
            audio_end_s=r.audio_end_s + shift[r.stream_id][1]) for r in self.records]
        labels = {first: label for label, first in first_of.items()}
        end_s = max(done_s.values()) if self.stream_lengths else self.end_s
        if end_s is not None and records:
            end_s = max(end_s, max(r.audio_end_s for r in records))
        return records, labels, end_s


def read_session_dir(directory: str | Path, *, deltas: bool = True) -> Session:
    d = Path(directory)
    meta, warning = _read_meta(d)
    journal = d / JOURNAL_NAME
    contents = read_journal_lines(journal if journal.exists() else None, deltas=deltas)
    return Session.from_contents(d, meta, contents, [warning] if warning else [])


class SessionStore:
    def __init__(self, root: str | Path | None = None) -> None:
        self.root = paths.sessions_root(root)

    def list(self) -> list[SessionInfo]:
        """Every session directory (with a journal or a session.json), newest first."""
        try:
            dirs = [p for p in self.root.iterdir() if p.is_dir()]
        except FileNotFoundError:  # nothing journalled yet
            return []
        except OSError:
            log.warning("cannot list the sessions in %s", self.root, exc_info=True)
            return []
        infos = []
        for d in dirs:
            if not ((d / JOURNAL_NAME).exists() or (d / SESSION_NAME).exists()):
                continue
            infos.append(_info(d, _read_meta(d)[0]))
        infos.sort(key=lambda i: (i.created, i.session_id), reverse=True)
        return infos

    def find(self, ref: str) -> Path:
        """A session directory from an id, a unique id prefix, "last", or a path."""
        p = Path(ref).expanduser()
        if p.is_file() and p.name == JOURNAL_NAME:
            return p.parent
        if p.is_dir() and ((p / JOURNAL_NAME).exists() or (p / SESSION_NAME).exists()):
            return p
        infos = self.list()
        if ref in ("last", "latest"):
            if not infos:
                raise SessionError(f"No sessions in {self.root}",
                                   "run `voxcap live` or `voxcap transcribe` first")
            return infos[0].path
        exact = [i for i in infos if i.session_id == ref or i.path.name == ref]
        matches = exact or [i for i in infos if i.session_id.startswith(ref)]
        if len(matches) == 1:
            return matches[0].path
        if not matches:
            raise SessionError(f"No session {ref!r} in {self.root}",
                               "list them with `voxcap sessions`, or give a session folder")
        raise SessionError(f"{len(matches)} sessions start with {ref!r}",
                           "give more of the id (see `voxcap sessions`)")

    def open(self, ref: str) -> Session:
        return read_session_dir(self.find(ref))


def describe(info: SessionInfo, now: float | None = None) -> str:
    """One line for a session list."""
    row = info.summary()
    size = f"{info.journal_bytes / 1024:.0f} KiB"
    parts = [info.session_id, f"{row.date} {row.time}", info.kind, row.length, row.state, size]
    return "  ".join([*parts, *(p for p in (row.speakers, row.title) if p)])
