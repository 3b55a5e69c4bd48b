"""Capture routing: each source's capture, and its audio to its engine stream or held.

A label's route is a stream id, or None while there is no stream to take the audio (the
engine is starting or restarting, captioning is paused): then its audio is held, a live
source's up to ``hold_s`` (the oldest beyond it is dropped, and that said once as
``AppProblem`` "held"), a file's whole (it can wait: nothing is lost by holding it). Routing a
label to a stream (``connect``) pushes its held audio first, in order, then the live blocks.
The drop ledger keeps all audio that will never be captioned: capture losses, engine gaps,
held audio dropped.

The captures deliver blocks on their own threads; routes, held audio and drops share one lock.
Every live capture's blocks are also measured (``input_levels``: its level, its silence said).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

import numpy as np

from ...engine.base import CaptionEngine
from ...errors import VoxcapError
from ...events import AppProblem
from ..lag import SAMPLE_RATE, CaptureClock
from ..sources import Stoppable
from .input_levels import InputLevels

log = logging.getLogger(__name__)
HOLD_S = 120.0


class CaptureRouting:
    def __init__(self, emit: Callable[[object], None], clock: CaptureClock,
                 engine: Callable[[], CaptionEngine | None], live: Callable[[], bool],
                 hold_s: float = HOLD_S,
                 pushed: Callable[[str, np.ndarray], None] | None = None,
                 levels: InputLevels | None = None) -> None:
        self._emit = emit
        self.levels = levels or InputLevels(emit)
        self._pushed = pushed or (lambda _sid, _samples: None)  # the caption watchdog's copy
        self._clock = clock
        self._engine = engine  # the engine now (None while there is none)
        self._live = live  # whether the sources' audio is gone if not taken in time
        self.hold_s = hold_s
        self._lock = threading.RLock()
        self._captures: dict[str, Stoppable] = {}
        self._routes: dict[str, str | None] = {}  # label -> stream id (None: hold the audio)
        self._held: dict[str, deque] = {}
        self._held_samples: dict[str, int] = {}
        self._held_warned: set[str] = set()
        self._drops: dict[tuple, float] = {}

    # --------------------------------------------------------------------- captures ----
    def expect(self, labels) -> None:
        """A new session: these labels' audio is held until each is connected to a stream."""
        with self._lock:
            self._held_warned.clear()
            for label in labels:
                self._routes[label] = None
                self._held[label] = deque()
                self._held_samples[label] = 0

    def open_captures(self, sources: list[tuple], audio, on_event: Callable) -> list[tuple]:
        """Start a capture for every (spec, description); returns those that could not start
        (spec, error)."""
        failed = []

        def said(event: object) -> None:
            self.levels.capture_said(event)  # an application waiting to play is not "no sound"
            on_event(event)
        for spec, desc in sources:
            try:
                self._captures[spec.label] = audio.open(
                    spec, lambda block, label=spec.label: self.on_block(label, block), said)
                if self._live():
                    self.levels.begin(spec.label, spec.kind, desc)
            except VoxcapError as exc:
                log.warning("%s could not start: %s", spec.label, exc.message, exc_info=True)
                failed.append((spec, exc))
        return failed

    def stop_captures(self) -> None:
        """Stop capturing; their last blocks still arrive (routed or held as before)."""
        caps, self._captures = self._captures, {}
        self.levels.end()
        for label, cap in caps.items():
            try:
                cap.stop()
            except Exception:
                log.warning("stopping the capture of %s failed", label, exc_info=True)

    def close(self) -> None:
        """The session ends: captures stopped, routes and held audio gone (drops stay counted)."""
        self.stop_captures()
        with self._lock:
            self._routes.clear()
            self._held.clear()
            self._held_samples.clear()

    def forget(self, labels) -> None:
        """These sources are out of the session (their capture could not start)."""
        with self._lock:
            for label in labels:
                self._routes.pop(label, None)
                self._held.pop(label, None)
                self._held_samples.pop(label, None)

    # ----------------------------------------------------------------------- routes ----
    def routed(self, label: str) -> bool:
        with self._lock:
            return label in self._routes

    def stream_of(self, label: str) -> str | None:
        with self._lock:
            return self._routes.get(label)

    def hold_all(self) -> None:
        """From now on every source's audio is held (restart, pause)."""
        with self._lock:
            for label in self._routes:
                self._routes[label] = None

    def connect(self, label: str, stream_id: str, eng) -> None:
        """Route ``label`` to ``stream_id`` of ``eng``: its held audio first, in order."""
        with self._lock:
            held = self._held.get(label) or deque()
            while held:
                samples, at = held.popleft()
                eng.push_audio(stream_id, samples)
                self._pushed(stream_id, samples)
                self._clock.pushed(stream_id, samples.size, at)
            self._held_samples[label] = 0
            if label in self._routes:
                self._routes[label] = stream_id

    def on_block(self, label: str, block) -> None:
        """A capture's audio (on its thread): to the engine, or held while it has no stream."""
        samples = block.samples
        self.levels.feed(label, samples)
        with self._lock:
            if label not in self._routes:
                return  # captioning stopped
            sid = self._routes[label]
            if sid is None:
                self._hold(label, samples, block.captured_at)
                return
            eng = self._engine()
            if eng is None:
                return
            eng.push_audio(sid, samples)
            self._pushed(sid, samples)
            self._clock.pushed(sid, samples.size, block.captured_at)

    def _hold(self, label: str, samples, captured_at: float) -> None:
        held = self._held.setdefault(label, deque())
        held.append((samples, captured_at))
        self._held_samples[label] = self._held_samples.get(label, 0) + samples.size
        if not self._live():
            return  # a file waits as long as it takes: nothing is lost by holding all of it
        limit = int(self.hold_s * SAMPLE_RATE)
        while self._held_samples[label] > limit and held:
            dropped, _ = held.popleft()
            self._held_samples[label] -= dropped.size
            key = ("held", label)
            self._drops[key] = self._drops.get(key, 0.0) + dropped.size / SAMPLE_RATE
            if label not in self._held_warned:
                self._held_warned.add(label)
                self._emit(AppProblem(
                    f"{label}: the engine is not ready after {self.hold_s:.0f} s; the oldest "
                    "held audio is being dropped", "wait for the engine, or stop captioning",
                    "held"))  # "held": the GUI clears it once the engine takes the audio

    # ------------------------------------------------------------------------ ledger ----
    def record_loss(self, key: tuple, total_s: float) -> None:
        """A running total of lost audio (a capture's loss of one kind, an engine stream's gaps)."""
        with self._lock:
            self._drops[key] = total_s

    def dropped_s(self) -> float:
        with self._lock:
            return sum(self._drops.values())

    def held_s(self) -> float:
        with self._lock:
            return sum(self._held_samples.values()) / SAMPLE_RATE
