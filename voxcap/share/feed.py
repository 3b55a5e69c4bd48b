"""The caption feed: the controller's events -> caption lines -> JSON messages for each viewer.

Not thread-safe: the share server calls it on its own event loop only (``server`` hops each
event over from the thread that published it).

    feed = CaptionFeed(masker=None, style={...})
    feed.load(session)                # the session so far (journal), or None; then live:
    feed.on_event(event)              # TextDelta, StreamFinished, StreamOpened, CaptioningState,
                                      # LineTranslated (a finished line's language)
    viewer = feed.add_viewer(wake)    # wake(): called when the viewer has something to send
    viewer.take()                     # the messages to send now (a snapshot first)
    feed.remove_viewer(viewer)

Messages (JSON objects, ``type`` first):

- ``snapshot``: ``{"type", "seq", "session", "state", "style", "lines": [LINE, ...]}`` — the
  session so far (its last ``snapshot_lines`` lines); every connection starts with one, and a
  viewer that fell behind gets a fresh one instead of what it missed.
- ``line``: ``{"type", "seq", "new", "added", **LINE}`` — a line was started or grew, or
  became final. LINE = ``{"id", "stream", "label", "text", "final", "paragraph", "start",
  "end", "wall"}``: ``start``/``end`` the audio span (seconds of the stream), ``wall`` the
  Unix time the text came out of the engine. Line ids keep increasing across sessions (and are
  the same when a restarted server rebuilds the session from the journal).
- ``state``: ``{"type", "seq", "state"}`` — captioning on/off/... (``CaptioningState``).
- ``style``: ``{"type", "seq", "style"}`` — the overlay's style changed in the app.

Bounds: each viewer holds at most ``viewer_queue`` messages (references to one shared encoded
copy); one more and its queue is emptied and it gets a snapshot next (it skips, nothing
waits for it). The snapshot holds the last ``snapshot_lines`` lines; the feed keeps the lines
the assembler keeps (the session's) and the deltas with text (for TXT/VTT without a journal).
"""

from __future__ import annotations

import itertools
import json
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from ..captions.assembly import CaptionAssembler, CaptionLine
from ..captions.masking import Masker
from ..events import (
    Captioning,
    CaptioningState,
    LineTranslated,
    StreamFinished,
    StreamOpened,
    TextDelta,
)

log = logging.getLogger(__name__)
FEED_COLUMNS = 160  # assembler lines; the page wraps them to its width (as the overlay does)
SNAPSHOT_LINES = 300
VIEWER_QUEUE = 256


def line_json(line: CaptionLine, wall: float, base: int = 0, lang: str = "") -> dict:
    return {"id": base + line.line_id, "stream": line.stream_id, "label": line.label, "text": line.text,
            "final": line.final, "paragraph": line.paragraph_start,
            "start": round(line.start_s, 3), "end": round(line.end_s, 3), "wall": round(wall, 3),
            "lang": lang}


def encode(message: dict) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


class Viewer:
    """One connected viewer's bounded queue of encoded messages."""

    def __init__(self, feed: CaptionFeed, wake: Callable[[], None], limit: int) -> None:
        self._feed = feed
        self._wake = wake
        self.limit = limit
        self.pending: deque[str] = deque()
        self.resync = True  # the next take() starts with a snapshot
        self.skips = 0  # times it fell behind and was sent a snapshot instead
        self.closed = False

    def push(self, text: str) -> None:
        if not self.resync:
            if len(self.pending) >= self.limit:
                self.pending.clear()
                self.resync = True
                self.skips += 1
            else:
                self.pending.append(text)
        self._wake()

    def take(self) -> list[str]:
        if self.resync:
            self.resync = False
            self.pending.clear()
            return [encode(self._feed.snapshot())]
        out = list(self.pending)
        self.pending.clear()
        return out

    def close(self) -> None:
        self.closed = True
        self._wake()


class CaptionFeed:
    def __init__(self, *, masker: Masker | None = None, style: dict | None = None,
                 viewer_queue: int = VIEWER_QUEUE, snapshot_lines: int = SNAPSHOT_LINES) -> None:
        self.viewer_queue = viewer_queue
        self.snapshot_lines = snapshot_lines
        self.style = dict(style or {})
        self.viewers: list[Viewer] = []
        self.seq = 0
        self.state = Captioning.OFF
        self.session_id = ""
        self.id_base = 0  # line ids keep increasing over sessions: a program can key on them
        self._max_id = 0
        self._masker = masker
        self._reset()

    # ------------------------------------------------------------------- session ----
    def _reset(self) -> None:
        self.asm = CaptionAssembler(width=FEED_COLUMNS, max_lines=5, masker=self._masker)
        self.lines: dict[int, CaptionLine] = {}  # line id -> the line now, in order
        self.walls: dict[int, float] = {}  # line id -> wall time of its last change
        self.langs: dict[int, str] = {}  # line id -> its speech's language, once known
        self.open_line: dict[str, int] = {}  # stream id -> its line still growing
        self.labels: dict[str, str] = {}  # stream id -> label
        self.deltas: list = []  # the session's deltas with text, for TXT/VTT without a journal
        self.last_index: dict[str, int] = {}  # stream id -> index of its last delta seen

    def load(self, session) -> None:
        """Start over from ``session`` (a ``captions.sessions.Session``: the journal so far),
        or empty for None; viewers get a snapshot."""
        self._reset()
        if session is not None:
            self.session_id = session.session_id
            for sid, label in session.labels.items():
                self._label(sid, label)
            for rec in session.records:
                self._delta(rec)
            for sid in session.stream_lengths:  # the streams that ended
                self._updates(self.asm.finish(sid), None)
            for rec in session.lines:
                self._language(rec)
        self._resync_all()

    def set_masker(self, masker: Masker | None) -> None:
        self._masker = masker
        self.asm.masker = masker  # words from now on (shown text never changes)

    def set_style(self, style: dict) -> None:
        self.style = dict(style)
        self._broadcast({"type": "style", "style": self.style})

    # --------------------------------------------------------------------- input ----
    def seen(self, delta) -> bool:
        """Whether this delta (stream, index) was already fed (from the journal)."""
        last = self.last_index.get(delta.stream_id)
        return last is not None and delta.index <= last

    def on_event(self, event) -> None:
        if isinstance(event, TextDelta):
            if not self.seen(event):
                self._delta(event)
        elif isinstance(event, StreamFinished):
            self._updates(self.asm.finish(event.stream_id), None)
        elif isinstance(event, StreamOpened):
            self._label(event.stream_id, event.label)
        elif isinstance(event, CaptioningState):
            self._state(event)
        elif isinstance(event, LineTranslated):
            self._language(event)

    def _label(self, stream_id: str, label: str) -> None:
        self.labels[stream_id] = label
        self.asm.set_label(stream_id, label)

    def _delta(self, delta) -> None:
        self.last_index[delta.stream_id] = delta.index
        if delta.text:
            self.deltas.append(delta)
        self._updates(self.asm.feed(delta), delta.produced_at)

    def _language(self, done) -> None:
        """A finished line's language (``LineTranslated`` or its journal record): the app's
        lines are narrower than the feed's, so it goes to the feed lines its audio overlaps that
        have none yet (a feed line speaks the language it starts in)."""
        if not done.language:
            return
        for line in reversed(self.lines.values()):
            if line.stream_id != done.stream_id:
                continue
            if line.end_s <= done.start_s:
                break  # the stream's lines before are earlier still
            if line.start_s < done.end_s and line.line_id not in self.langs:
                self.langs[line.line_id] = done.language
                self._line(line, "", False, None)

    def _state(self, event: CaptioningState) -> None:
        if event.state == Captioning.STARTING and not self.state.active:  # a new session
            self.session_id = event.session_id
            self.id_base = self._max_id
            self._reset()  # the pages start empty
            self.state = event.state
            self._resync_all()
            return
        if event.session_id:
            self.session_id = event.session_id
        if event.state != self.state:
            self.state = event.state
            self._broadcast({"type": "state", "state": event.state})

    def _updates(self, updates, wall: float | None) -> None:
        for u in updates:
            line = u.line
            before = self.open_line.get(line.stream_id)
            if u.new_line and before is not None and before != line.line_id:
                # the assembler closes a stream's line silently when the next one starts
                self._line(replace(self.lines[before], final=True), "", False, None)
            self.open_line[line.stream_id] = line.line_id
            if line.final:
                self.open_line.pop(line.stream_id, None)
            self._line(line, u.added, u.new_line, wall)

    def _line(self, line: CaptionLine, added: str, new: bool, wall: float | None) -> None:
        when = wall if wall is not None else self.walls.get(line.line_id, 0.0)
        self.lines[line.line_id] = line
        self.walls[line.line_id] = when
        self._max_id = max(self._max_id, self.id_base + line.line_id)
        self._broadcast({"type": "line", "new": new, "added": added,
                         **line_json(line, when, self.id_base, self.langs.get(line.line_id, ""))})

    # -------------------------------------------------------------------- output ----
    def snapshot(self) -> dict:
        lines = list(itertools.islice(reversed(self.lines.values()), self.snapshot_lines))[::-1]
        return {"type": "snapshot", "seq": self.seq, "session": self.session_id,
                "state": self.state, "style": self.style,
                "lines": [line_json(ln, self.walls.get(ln.line_id, 0.0), self.id_base,
                                    self.langs.get(ln.line_id, "")) for ln in lines]}

    def _broadcast(self, message: dict) -> None:
        self.seq += 1
        text = encode({"type": message["type"], "seq": self.seq,
                       **{k: v for k, v in message.items() if k != "type"}})
        for v in self.viewers:
            v.push(text)

    def _resync_all(self) -> None:
        for v in self.viewers:
            if not v.resync:
                v.pending.clear()
                v.resync = True
            v.push("")  # only wakes it: resync is set

    # ------------------------------------------------------------------- viewers ----
    def add_viewer(self, wake: Callable[[], None]) -> Viewer:
        v = Viewer(self, wake, self.viewer_queue)
        self.viewers.append(v)
        return v

    def remove_viewer(self, viewer: Viewer) -> None:
        if viewer in self.viewers:
            self.viewers.remove(viewer)

    def close_viewers(self) -> None:
        for v in list(self.viewers):
            v.close()
