"""Each live source's input level, and a source with no sound for long said.

Every captured block is fed here on its capture's own thread (``CaptureRouting.on_block``,
never PortAudio's callback, which only queues it): its sum of squares is microseconds of work.
The level is that of the last complete ``LEVEL_WINDOW_S`` (a reading: ``levels()``, polled by
the front end a few times a second, so nothing here queues up if it is busy).

The rule for "no sound" (``SourceSilence``): a window is silent below ``SILENT_DBFS`` (a
muted microphone or a monitor with nothing playing is digital silence; a live microphone's
room noise is usually above it, and a breath or a key press is). A source with no sound for ``after_s``
(10 s) while the other side of "Both" had sound in that time is said, as is a source alone,
or both sides together, after ``ALONE_FACTOR`` times that (30 s: listening to a silence that
long is rarer than the other side talking for 10 s). Time is each source's own audio time (a
capture that stalls is said by the capture itself). Said once, while captures run (also while
the engine starts: that audio is captioned later); "back" at its first sound. A file is not
judged (its silence is its content), nor an application's sound while its capture waits for the
application to play (``capture_said``): "waiting for <app>" says it better; its silence counts
from the end of the wait.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...capture.sources import APP, MIC, SYSTEM
from ...events import CaptureDeviceChanged, SourceSilence
from ...setting_refs import ref
from ..lag import SAMPLE_RATE

SILENT_DBFS = -60.0
FLOOR_DBFS = -90.0  # digital silence is shown as this, not minus infinity
LEVEL_WINDOW_S = 0.25
SILENT_AFTER_S = 10.0
ALONE_FACTOR = 3.0
APP_WAITING = "waiting"  # capture/app_stream.py's notice while the application plays nothing


def dbfs(mean_square: float) -> float:
    """The RMS level of a stretch with this mean square, in dB below full scale."""
    return max(FLOOR_DBFS, 10 * math.log10(mean_square)) if mean_square > 0 else FLOOR_DBFS


@dataclass
class _Source:
    label: str
    kind: str
    description: str
    audio_s: float = 0.0  # its audio since the capture started (time here: a stall stops it)
    heard_s: float | None = None  # the end of its last window with sound
    since_s: float = 0.0  # its silence counts from here at the earliest (the end of a wait)
    squares: float = 0.0  # this window's so far
    samples: int = 0
    level: float | None = None  # dBFS of the last complete window
    said: bool = False  # its silence has been said

    def what(self) -> str:
        if self.kind == MIC:
            return "the microphone"
        if self.kind == SYSTEM:
            return "system audio"
        return self.description or self.label


def _silence_words(src: _Source, silent_s: float) -> SourceSilence:
    message = f"{src.label}: no sound from {src.what()} for {silent_s:.0f} s"
    other = ref("use_source", "NAME")
    if src.kind == MIC:
        hint = "microphone muted?"
        fix = f"is it muted? Unmute it in the sound settings, or {other}"
    elif src.kind in (SYSTEM, APP):
        hint = "playing elsewhere?"
        fix = f"is the sound playing on another output? Play it on the default output, or {other}"
    else:
        hint = "muted, or playing elsewhere?"
        fix = f"is it muted, or the sound going elsewhere? Check the sound settings, or {other}"
    return SourceSilence(src.label, "silent", round(silent_s, 1), message, fix, hint)


class InputLevels:
    def __init__(self, emit: Callable[[object], None], after_s: float = SILENT_AFTER_S) -> None:
        self._emit = emit
        self.after_s = after_s
        self._lock = threading.Lock()
        self._sources: dict[str, _Source] = {}
        self._waiting: set[str] = set()  # application sources waiting for their app to play
        self._window = int(LEVEL_WINDOW_S * SAMPLE_RATE)

    def begin(self, label: str, kind: str, description: str) -> None:
        """A live capture of ``label`` started (again, after a pause): its silence counts from now."""
        with self._lock:
            self._sources[label] = _Source(label, kind, description)

    def end(self) -> None:
        """The captures stopped: no levels, nothing judged (a silence said is over with them)."""
        with self._lock:
            self._sources.clear()
            self._waiting.clear()

    def capture_said(self, event: object) -> None:
        """A capture's event: an application source waiting for its app to play (a
        ``CaptureDeviceChanged`` "waiting", said before its first block) is not judged while it
        waits; its other news ends the wait. A silence said before the wait is over with it."""
        if not isinstance(event, CaptureDeviceChanged):
            return
        back = None
        with self._lock:
            if event.reason != APP_WAITING:
                self._waiting.discard(event.source)
                return
            self._waiting.add(event.source)
            src = self._sources.get(event.source)
            if src is not None and src.said:
                src.said = False
                back = SourceSilence(src.label, "back", 0.0,
                                     f"{src.label}: {src.what()} plays nothing now")
        if back is not None:
            self._emit(back)

    def levels(self) -> dict[str, float | None]:
        """Each live source's level now (dBFS of its last ``LEVEL_WINDOW_S``; None: none yet)."""
        with self._lock:
            return {label: src.level for label, src in self._sources.items()}

    def feed(self, label: str, samples: np.ndarray) -> None:
        """A captured block of ``label`` (on its capture's thread)."""
        flat = np.asarray(samples, dtype=np.float32).reshape(-1)
        said = None
        with self._lock:
            src = self._sources.get(label)
            if src is None:
                return
            src.squares += float(np.dot(flat, flat))
            src.samples += flat.size
            if src.samples < self._window:
                return
            src.level = dbfs(src.squares / src.samples)
            src.audio_s += src.samples / SAMPLE_RATE
            src.squares, src.samples = 0.0, 0
            said = self._judge(src)
        if said is not None:
            self._emit(said)

    def _judge(self, src: _Source) -> SourceSilence | None:
        if src.level is not None and src.level >= SILENT_DBFS:
            src.heard_s = src.audio_s
            if src.said:
                src.said = False
                return SourceSilence(src.label, "back", 0.0, f"{src.label}: sound again")
            return None
        if src.label in self._waiting:
            src.since_s = src.audio_s
            return None
        silent_s = src.audio_s - max(src.heard_s or 0.0, src.since_s)
        others_heard = any(o.heard_s is not None and o.audio_s - o.heard_s < self.after_s
                           for o in self._sources.values() if o is not src)
        bound = self.after_s if others_heard else self.after_s * ALONE_FACTOR
        if src.said or silent_s < bound:
            return None
        src.said = True
        return _silence_words(src, silent_s)
