"""The session journal: every delta appended to disk as it arrives, so nothing is lost.

    journal = Journal.create({"model": ..., "graph_mode": ..., "delay_ms": ...}, kind="live",
                             on_status=print)         # on_status gets JournalStatus events
    journal.stream_opened(stream_id, label="You", source="Built-in microphone")
    journal.on_event(event)     # TextDelta -> append, StreamFinished -> stream_finished,
                                # SessionRolled -> a rollover record;
                                # usable directly as an EventHub callback
    journal.update_settings(resolved_graph_mode="FULL_DECODE_ONLY")
    journal.paused(); journal.resumed()   # a pause record each; session.json keeps the time
    journal.close()             # fsync, session.json gets its end time
    journal.session()           # what was journalled, as a sessions.Session (for export)

A session is a directory ``<data dir>/sessions/<session id>/`` (mode 0700) holding
``session.json`` (id, kind, times, paused time, the writing process, settings, streams;
rewritten atomically) and
``journal.jsonl`` (see ``records``).

Durability: each record is handed to the kernel with one unbuffered ``os.write`` before
``append`` returns, so a crash or ``kill -9`` of the app loses nothing that ``append``
reported written (True). A background thread fsyncs every ``fsync_interval_s`` (2 s) when
something was written, and ``close`` fsyncs: a power cut loses at most that interval.
``append`` costs a JSON encode and a write (see benchmarks/journal_bench.py).

Failure (read-only or full data directory, I/O error): ``append`` never raises; captions go
on. The first failure emits ``JournalStatus(writing=False, ...)`` once, records are then
kept in memory (up to ``max_backlog_bytes``, oldest dropped first and counted in a ``gap``
record) and retried every ``retry_s``; when a retry succeeds the backlog is written and
``JournalStatus(writing=True, ...)`` is emitted. A record cut off by the failure is
terminated by a newline first, so the reader skips it and keeps everything around it.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import __version__, paths
from ..events import LineTranslated, SessionRolled, StreamFinished, TextDelta
from .records import (
    FORMAT_VERSION,
    JOURNAL_NAME,
    SESSION_NAME,
    delta_line,
    end_line,
    gap_line,
    line_line,
    pause_line,
    rollover_line,
    stream_line,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JournalStatus:
    """The journal stopped (``writing=False``) or resumed being written."""

    session_id: str
    writing: bool
    message: str
    fix: str = ""
    path: str = ""


def new_session_id(now: float | None = None) -> str:
    now = time.time() if now is None else now
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(2)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t))


class Journal:
    def __init__(self, session_id: str, directory: Path, meta: dict, *,
                 fsync_interval_s: float = 2.0, retry_s: float = 10.0,
                 max_backlog_bytes: int = 32 * 2**20,
                 on_status: Callable[[JournalStatus], None] | None = None) -> None:
        self.session_id = session_id
        self.dir = directory
        self.path = directory / JOURNAL_NAME
        self.meta = meta
        self.fsync_interval_s = fsync_interval_s
        self.retry_s = retry_s
        self.max_backlog_bytes = max_backlog_bytes
        self._on_status = on_status
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._failing = False
        self._next_retry = 0.0
        self._partial = False  # a record was cut off: write a newline before the next
        self._backlog: collections.deque[bytes] = collections.deque()
        self._backlog_bytes = 0
        self._dropped = 0
        self._dirty = False
        self._closed = False
        self._streams: set[str] = set()
        self.problem: JournalStatus | None = None
        self.records_written = 0
        self.bytes_written = 0
        self._stop = threading.Event()
        self._syncer: threading.Thread | None = None

    # ----------------------------------------------------------------- creation --
    @classmethod
    def create(cls, settings: dict | None = None, *, kind: str = "live", title: str = "",
               root: str | Path | None = None, session_id: str | None = None,
               on_status: Callable[[JournalStatus], None] | None = None,
               **options) -> Journal:
        """A new session directory under ``root`` (default: the data dir's ``sessions``).

        Never raises for an unwritable directory: the journal starts failed, emits its
        status once, and keeps retrying (see the module docstring)."""
        now = time.time()
        sid = session_id or new_session_id(now)
        meta = {"format": FORMAT_VERSION, "session": sid, "kind": kind, "title": title,
                "created": _iso(now), "created_unix": round(now, 3), "ended": None,
                "ended_unix": None, "paused_s": 0.0, "paused_since": None,
                "pid": os.getpid(), "app_version": __version__,
                "settings": dict(settings or {}), "streams": {}}
        journal = cls(sid, paths.sessions_root(root) / sid, meta, on_status=on_status, **options)
        with journal._lock:
            ok = journal._try_open_locked()
        journal._emit_pending()
        if ok or journal._failing:
            journal._syncer = threading.Thread(target=journal._sync_loop, daemon=True,
                                               name=f"voxcap-journal-{sid}")
            journal._syncer.start()
        return journal

    # -------------------------------------------------------------------- input --
    @property
    def writing(self) -> bool:
        return self._fd is not None and not self._failing

    def on_event(self, event) -> None:
        if isinstance(event, TextDelta):
            self.append(event)
        elif isinstance(event, StreamFinished):
            self.stream_finished(event)
        elif isinstance(event, SessionRolled):
            self._write(rollover_line(self.session_id, event))
        elif isinstance(event, LineTranslated):
            self._write(line_line(self.session_id, event, time.time()))

    def stream_opened(self, stream_id: str, label: str = "", source: str = "") -> None:
        self._streams.add(stream_id)
        with self._lock:  # session.json is serialised under the lock, from another thread maybe
            self.meta["streams"][stream_id] = {"label": label, "source": source}
        self._write(stream_line(self.session_id, stream_id, label, source, time.time()),
                    meta=True)

    def append(self, delta) -> bool:
        """Journal one delta; True once it is in the file (in the kernel's hands)."""
        if delta.stream_id not in self._streams:
            self.stream_opened(delta.stream_id)
        return self._write(delta_line(self.session_id, delta))

    def stream_finished(self, event: StreamFinished) -> None:
        with self._lock:
            info = self.meta["streams"].setdefault(event.stream_id, {"label": "", "source": ""})
            info.update(reason=event.reason, audio_seconds=round(event.audio_seconds, 3))
        self._write(end_line(self.session_id, event.stream_id, event.reason,
                             event.audio_seconds, time.time()), meta=True)

    def update_settings(self, **settings) -> None:
        with self._lock:
            self.meta["settings"].update(settings)
        self._write(b"", meta=True)

    def paused(self) -> None:
        """Captioning paused: nothing is captured until ``resumed`` (the session goes on)."""
        now = time.time()
        with self._lock:
            self.meta["paused_since"] = round(now, 3)
        self._write(pause_line(self.session_id, False, now), meta=True)

    def resumed(self) -> None:
        now = time.time()
        with self._lock:
            self._end_pause_locked(now)
        self._write(pause_line(self.session_id, True, now), meta=True)

    def _end_pause_locked(self, now: float) -> None:
        since = self.meta.get("paused_since")
        if since is not None:
            self.meta["paused_s"] = round(self.meta.get("paused_s", 0.0) + now - since, 3)
            self.meta["paused_since"] = None

    def close(self) -> None:
        if self._closed:
            return
        now = time.time()
        with self._lock:
            self._end_pause_locked(now)
            self.meta.update(ended=_iso(now), ended_unix=round(now, 3))
        self._write(b"", meta=True)
        self._stop.set()
        if self._syncer is not None:
            self._syncer.join(timeout=10)
        with self._lock:
            self._closed = True
            if self._fd is not None:
                _fsync_and_close(self._fd)
                self._fd = None
        self._emit_pending()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def session(self):
        """The session as journalled so far (plus records only held in memory)."""
        from .sessions import Session, read_journal_lines

        with self._lock:
            pending = list(self._backlog)
            meta = json.loads(json.dumps(self.meta))
        contents = read_journal_lines(self.path if self.path.exists() else None, pending)
        return Session.from_contents(self.dir, meta, contents)

    # ---------------------------------------------------------------- internals --
    _pending_status: JournalStatus | None = None

    def _write(self, line: bytes, meta: bool = False) -> bool:
        with self._lock:
            if self._closed:
                return False
            if self._failing or self._fd is None:
                if time.monotonic() < self._next_retry or not self._try_open_locked():
                    if line:
                        self._keep_locked(line)
                    ok = False
                else:
                    ok = self._write_locked(line, meta)
            else:
                ok = self._write_locked(line, meta)
        self._emit_pending()
        return ok

    def _write_locked(self, line: bytes, meta: bool) -> bool:
        try:
            if meta:
                self._write_meta_locked()
            if line:
                self._write_all_locked(line)
                self.records_written += 1
            return True
        except OSError as exc:
            self._fail_locked(exc)
            if line:
                self._keep_locked(line)
            return False

    def _write_all_locked(self, data: bytes) -> None:
        if self._partial:
            data = b"\n" + data
        fd = self._fd
        assert fd is not None  # the callers opened it
        view, done = memoryview(data), 0
        try:
            while done < len(data):
                done += os.write(fd, view[done:])
        except OSError:
            if done:
                self._partial = True
            raise
        self._partial = False
        self._dirty = True
        self.bytes_written += done

    def _write_meta_locked(self) -> None:
        tmp = self.dir / (SESSION_NAME + ".tmp")
        data = json.dumps(self.meta, ensure_ascii=False, indent=1).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view, done = memoryview(data), 0
            while done < len(data):
                done += os.write(fd, view[done:])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.dir / SESSION_NAME)

    def _try_open_locked(self) -> bool:
        """Open the session (first time or after a failure) and write what was held back."""
        try:
            if self._fd is None:
                self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                _fsync_dir(self.dir)
            self._write_meta_locked()
            if self._dropped:
                self._write_all_locked(gap_line(self.session_id, self._dropped, time.time()))
                self._dropped = 0
            while self._backlog:
                self._write_all_locked(self._backlog[0])
                self._backlog_bytes -= len(self._backlog.popleft())
                self.records_written += 1
        except OSError as exc:
            self._fail_locked(exc)
            return False
        if self._failing:
            self._failing = False
            self.problem = None
            self._pending_status = JournalStatus(
                self.session_id, True, f"The transcript journal is being written again: {self.path}",
                path=str(self.path))
        return True

    def _fail_locked(self, exc: OSError) -> None:
        self._next_retry = time.monotonic() + self.retry_s
        if self._failing:
            return
        self._failing = True
        reason = exc.strerror or str(exc)
        self.problem = JournalStatus(
            self.session_id, False,
            f"The transcript journal is not being written ({reason}: {exc.filename or self.path})",
            f"captions go on; free disk space or make {self.dir.parent} writable: what is missed "
            f"is kept in memory (up to {self.max_backlog_bytes // 2**20} MiB) and written "
            f"once it can be; or export with -o before quitting",
            str(self.path))
        self._pending_status = self.problem

    def _keep_locked(self, line: bytes) -> None:
        self._backlog.append(line)
        self._backlog_bytes += len(line)
        while self._backlog_bytes > self.max_backlog_bytes and self._backlog:
            self._backlog_bytes -= len(self._backlog.popleft())
            self._dropped += 1

    def _emit_pending(self) -> None:
        status, self._pending_status = self._pending_status, None
        if status is not None and self._on_status is not None:
            try:
                self._on_status(status)
            except Exception:  # a broken listener must not stop the journal
                log.exception("a journal status listener failed")

    def _sync_loop(self) -> None:
        while not self._stop.wait(self.fsync_interval_s):
            fd = None
            with self._lock:
                if self._dirty and self._fd is not None:
                    self._dirty = False
                    fd = os.dup(self._fd)
            if fd is not None:
                _fsync_and_close(fd)
            if self._failing and time.monotonic() >= self._next_retry:
                self._write(b"")  # retry even when no new delta arrives


def _fsync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:  # written, not yet on disk: the next sync tries again
        log.warning("fsync failed", exc_info=True)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    try:
        _fsync_and_close(os.open(directory, os.O_RDONLY))
    except OSError:  # some file systems cannot sync a folder
        log.info("fsync of the folder %s failed", directory, exc_info=True)


def engine_session_settings(settings, ready=None, sources: dict | None = None) -> dict:
    """What a session records about the engine: from ``InProcessSettings`` and (once started)
    its ``EngineReady``; ``sources``: stream label -> capture device or file."""
    out = {
        "model": str(getattr(settings, "model_dir", "")),
        "dummy_weights": bool(getattr(settings, "dummy_weights", False)),
        "graph_mode": getattr(settings, "graph_mode", None),
        "delay_ms": getattr(settings, "delay_ms", None),
        "max_model_len": getattr(settings, "max_model_len", None),
        "dtype": getattr(settings, "dtype", None),
        "precision": getattr(settings, "precision", None),
        "eager": bool(getattr(settings, "enforce_eager", False)),
    }
    if ready is not None:
        out.update(resolved_graph_mode=ready.resolved_graph_mode, device=ready.device,
                   delay_ms=ready.transcription_delay_ms,
                   resolved_precision=getattr(ready, "precision", "") or None)
    if sources:
        out["sources"] = dict(sources)
    return out
