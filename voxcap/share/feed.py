"""The caption feed: the controller's events -> caption lines -> JSON messages for each viewer.

Not thread-safe: the share server calls it on its own event loop only (``server`` hops each
event over from the thread that published it).

    feed = CaptionFeed(masker=None, style={...})
    feed.load(session)                # the session so far (journal), or None; then live:
    feed.on_event(event)              # TextDelta, StreamFinished, StreamOpened, CaptioningState,
                                      # LineTranslated (a finished line's language and
                                      # translation), CaptioningAsked (F6: "pausing"...)
    viewer = feed.add_viewer(wake)    # wake(): called when the viewer has something to send
    viewer.take()                     # the messages to send now (a snapshot first)
    feed.remove_viewer(viewer)

Messages (JSON objects, ``type`` first):

- ``snapshot``: ``{"type", "seq", "session", "state", "style", "lines": [LINE, ...]}`` — the
  session so far (its last ``snapshot_lines`` lines); every connection starts with one, and a
  viewer that fell behind gets a fresh one instead of what it missed.
- ``line``: ``{"type", "seq", "new", "added", **LINE}`` — a line was started or grew, or
  became final, or its language or translation came. LINE = ``{"id", "stream", "label", "text",
  "final", "paragraph", "start", "end", "wall", "lang", "target", "translation",
  "translated"}``: ``start``/``end`` the audio span (seconds of the stream), ``wall`` the Unix
  time the text came out of the engine, ``lang`` the language it was heard in ("" not yet or
  too short to tell), ``translation`` its text in ``target`` ("" none yet; it grows as the
  app's narrower lines within it are translated), ``translated`` true once that covers the
  line to its end; a message of a line whose translation changed to the share of its sentence's
  translation (translated again as one piece, a moment after each line alone) adds ``"refined":
  true`` (a past line's record improved: live captions leave it out). Line ids keep increasing
  across sessions (and are the same when a restarted server rebuilds the session from the
  journal). Programs that know only the earlier fields keep working: the later ones are only
  added.
- ``state``: ``{"type", "seq", "state"}`` — captioning on/off/paused/... (``CaptioningState``),
  or "pausing"/"resuming" from the moment the person asks until the session gets there.
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
from dataclasses import dataclass, field, replace

from ..captions.assembly import CaptionAssembler, CaptionLine
from ..captions.masking import Masker
from ..events import (
    AppProblem,
    Captioning,
    CaptioningAsked,
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
SAME_START_S = 0.001  # line starts are rounded to the millisecond (app.line_translation.line_key)


@dataclass
class LineTranslation:
    """A feed line's translation: the app's lines are narrower, so it is theirs joined, each
    placed in the feed line where its first word is (matched by stream and start time, never by
    line number). A part not translated (already in the target language) is its original."""

    target: str = ""
    parts: dict[float, tuple[float, str, bool]] = field(default_factory=dict)  # start -> (end,
    # text, translated)

    def text(self) -> str:
        """The translation, "" while no part of the line is translated."""
        parts = [self.parts[start] for start in sorted(self.parts)]
        if not any(translated for _end, _text, translated in parts):
            return ""
        return " ".join(text for _end, text, _translated in parts if text)

    def covers(self, end_s: float) -> bool:
        return any(end >= end_s - SAME_START_S for end, _text, _translated in self.parts.values())


NOT_TRANSLATED = LineTranslation()


def line_json(line: CaptionLine, wall: float, base: int = 0, lang: str = "",
              translated: LineTranslation | None = None) -> dict:
    """A line as the feed sends it (``translated``: its translation so far)."""
    t = translated or NOT_TRANSLATED
    return {"id": base + line.line_id, "stream": line.stream_id, "label": line.label, "text": line.text,
            "final": line.final, "paragraph": line.paragraph_start,
            "start": round(line.start_s, 3), "end": round(line.end_s, 3), "wall": round(wall, 3),
            "lang": lang, "target": t.target, "translation": t.text(),
            "translated": line.final and t.covers(line.end_s)}


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
        self.asked = ""  # "pausing" / "resuming": asked for, the session not there yet
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
        self.translations: dict[int, LineTranslation] = {}  # line id -> its translation so far
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
        elif isinstance(event, CaptioningAsked):
            self._asked(event.what)
        elif isinstance(event, AppProblem) and self.asked:  # a pause refused (a file)
            self._asked("")

    def _label(self, stream_id: str, label: str) -> None:
        self.labels[stream_id] = label
        self.asm.set_label(stream_id, label)

    def _delta(self, delta) -> None:
        self.last_index[delta.stream_id] = delta.index
        if delta.text:
            self.deltas.append(delta)
        self._updates(self.asm.feed(delta), delta.produced_at)

    def _language(self, done) -> None:
        """A finished line's language and translation (``LineTranslated`` or its journal
        record): the app's lines are narrower than the feed's, so its language goes to the feed
        lines its audio overlaps that have none yet (a feed line speaks the language it starts
        in), its translation to the feed line its first word is in; each line changed is sent
        again (an update of that line)."""
        changed: dict[int, CaptionLine] = {}
        first: CaptionLine | None = None  # the feed line its first word is in (or, in a gap,
        # the earliest its audio overlaps)
        for line in reversed(self.lines.values()):
            if line.stream_id != done.stream_id:
                continue
            if line.end_s <= done.start_s:
                break  # the stream's lines before are earlier still
            if line.start_s < done.end_s:
                first = line
                if done.language and line.line_id not in self.langs:
                    self.langs[line.line_id] = done.language
                    changed[line.line_id] = line
            if line.start_s <= done.start_s + SAME_START_S:
                break
        if done.target and first is not None:
            self._translated(first, done)
            changed[first.line_id] = first
        refined = bool(getattr(done, "refined", False))
        for line in sorted(changed.values(), key=lambda ln: ln.line_id):
            self._line(line, "", False, None, refined)

    def _translated(self, line: CaptionLine, done) -> None:
        mask = self.asm.masker.mask_text if self.asm.masker is not None else str
        t = self.translations.setdefault(line.line_id, LineTranslation(done.target))
        if t.target != done.target:  # the target changed in the app: the new one from now on
            t.target, t.parts = done.target, {}
        text = done.translation or done.text
        t.parts[round(done.start_s, 3)] = (done.end_s, mask(text.strip()), bool(done.translation))

    def _asked(self, what: str) -> None:
        before = self.shown_state
        self.asked = what
        if self.shown_state != before:
            self._broadcast({"type": "state", "state": self.shown_state})

    @property
    def shown_state(self) -> str:
        """What the pages say of the session: its state, or what was asked of it meanwhile."""
        return self.asked or self.state

    def _state(self, event: CaptioningState) -> None:
        if event.state == Captioning.STARTING and not self.state.active:  # a new session
            self.session_id = event.session_id
            self.id_base = self._max_id
            self._reset()  # the pages start empty
            self.state, self.asked = event.state, ""
            self._resync_all()
            return
        if event.session_id:
            self.session_id = event.session_id
        before = self.shown_state
        self.state, self.asked = event.state, ""
        if self.shown_state != before:
            self._broadcast({"type": "state", "state": self.shown_state})

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

    def _line(self, line: CaptionLine, added: str, new: bool, wall: float | None,
              refined: bool = False) -> None:
        """Send the line as it is now (``refined``: it changed by its share of its sentence's
        translation, which live captions such as OBS's leave out)."""
        when = wall if wall is not None else self.walls.get(line.line_id, 0.0)
        self.lines[line.line_id] = line
        self.walls[line.line_id] = when
        self._max_id = max(self._max_id, self.id_base + line.line_id)
        self._broadcast({"type": "line", "new": new, "added": added, **self._line_json(line, when),
                         **({"refined": True} if refined else {})})

    def _line_json(self, line: CaptionLine, wall: float) -> dict:
        return line_json(line, wall, self.id_base, self.langs.get(line.line_id, ""),
                         self.translations.get(line.line_id))

    # -------------------------------------------------------------------- output ----
    def snapshot(self) -> dict:
        lines = list(itertools.islice(reversed(self.lines.values()), self.snapshot_lines))[::-1]
        return {"type": "snapshot", "seq": self.seq, "session": self.session_id,
                "state": self.shown_state, "style": self.style,
                "lines": [self._line_json(ln, self.walls.get(ln.line_id, 0.0)) for ln in lines]}

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
