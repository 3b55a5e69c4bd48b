"""The session controller: engine, audio sources and journal wired together, with no Qt. It
is the only captioning runtime: the GUI, ``voxcap live`` and ``voxcap transcribe`` are front
ends on it (``voxcap.commands.terminal_frontend``); a file is one more source (``app.sources``).

    hub = EventHub()
    ctl = SessionController(hub.publish)       # every event goes to ``publish``
    ctl.start_engine(settings.engine_settings())
    ctl.start_captioning("both")               # "system", "mic", "both" or a device name
    ctl.apply_engine_settings(new_settings, "graph mode FULL_AND_PIECEWISE")  # restart if needed
    ctl.pause_captioning()                     # flush, stop capturing; the session stays open
    ctl.resume_captioning()                    # capture again into the same session
    ctl.stop_captioning()                      # flush; ctl.abort() gives up on the flush
    ctl.shutdown().wait()                      # flushes, closes the journal, stops the engine

Every public method returns at once: the work runs on the controller's own thread, one command
after the other, and its outcome comes back as plain events (``voxcap.events``): the engine's
own (stages, ready, failed, deltas, stream ends), the capture layer's, and the controller's
``CaptioningState``, ``StreamOpened``, ``EngineRestarting`` and ``AppProblem``. ``publish`` is
called on whatever thread produced the event (engine, capture, controller): it must be quick
(an ``EventHub``, a Qt signal emit, a queue put).

What it promises:

- Captures start as soon as captioning is asked for, even while the engine is still loading or
  being restarted (a graph-mode switch): their audio is held (up to ``hold_s`` per source, the
  excess reported as ``AppProblem``) and pushed into the new streams once the engine is ready, so
  nothing said in the meantime is lost; it is transcribed late instead.
- An engine restart first flushes the open streams (their last words still arrive), then stops
  the old engine, then starts the new one; the journal session goes on (one session, new stream
  ids with the same labels, the new graph mode recorded in its settings).
- The journal is fed on its own thread (never the engine's), and closed after every delta that
  reached it was written.
- One flush policy: stopping (or a source's end) closes the streams and waits for their last
  words as long as the engine keeps producing; after ``flush_timeout_s`` without any progress
  (or on ``abort()``) the streams are aborted, and that is reported.
- A source that ends (a file) closes its stream; when every source has ended, captioning
  stops as if asked to (flush, journal closed, ``CaptioningState(OFF)``).
- Pause keeps the session: the captures stop (nothing is captured while paused), the open
  streams are flushed (their last words arrive), the journal gets a ``pause`` record and
  ``CaptioningState(PAUSED)`` is published; the engine stays up. Resume opens the captures
  and new streams (same labels) in the same session, journals ``resume`` and goes on as a
  start does ("waiting" while the engine is not ready). Stop while paused ends the session.
  A file cannot be paused (its reader would start again from the beginning).
- ``clock`` (``CaptureClock``) knows when each stream sample was captured: the GUI measures
  caption lag with it.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable

from ..captions.journal import Journal, engine_session_settings
from ..engine.settings import changes_that_apply
from ..errors import EngineError, VoxcapError
from ..events import (
    AppProblem,
    Captioning,
    CaptioningState,
    CaptureLoss,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    EngineStopped,
    SessionRolled,
    SourceEnded,
    StreamFinished,
    StreamGap,
    StreamOpened,
    TextDelta,
)
from .lag import SAMPLE_RATE, CaptureClock
from .sources import AudioSources

log = logging.getLogger(__name__)
FLUSH_TIMEOUT_S = 30.0  # without any progress from the engine
HOLD_S = 120.0
QUIT_ENGINE_WAIT_S = 3.0  # an app quitting at once waits this long for the engine's shutdown
_LIFECYCLE = (EngineProgress, EngineReady, EngineFailed, EngineStopped)
_JOURNALLED = (TextDelta, StreamFinished, SessionRolled)
CAPTURING = tuple(c for c in Captioning if c.capturing)  # audio is being captured
ACTIVE = tuple(c for c in Captioning if c.active)  # a session is open (paused too)


def default_engine_factory(verbose: bool = False):
    def make(settings, on_event):
        from ..engine.factory import build_engine

        return build_engine(settings, on_event=on_event, verbose=verbose)
    return make


class SessionController:
    def __init__(self, publish: Callable[[object], None], *, engine_factory: Callable | None = None,
                 audio: AudioSources | None = None, journal: bool = True,
                 journal_root=None, hold_s: float = HOLD_S,
                 flush_timeout_s: float = FLUSH_TIMEOUT_S, verbose: bool = False) -> None:
        self._out = publish
        self._engine_factory = engine_factory or default_engine_factory(verbose)
        self.audio = audio or AudioSources()
        self._journal_enabled = journal
        self._journal_root = journal_root
        self.hold_s = hold_s
        self.flush_timeout_s = flush_timeout_s
        self.clock = CaptureClock()
        self.engine = None
        self.engine_settings = None
        self.state = Captioning.OFF
        self.session_id = ""
        self.rollovers = 0  # engine-session switches in this captioning session (the meter's count)
        self._generation = 0
        self._lock = threading.RLock()  # routes, held audio, drops
        self._routes: dict[str, str | None] = {}  # label -> stream id (None: hold the audio)
        self._held: dict[str, deque] = {}
        self._held_samples: dict[str, int] = {}
        self._held_warned: set[str] = set()
        self._drops: dict[tuple, float] = {}
        self._sources: list[tuple] = []  # (spec, description)
        self._source = ""  # what start_captioning was asked for
        self._captures: dict[str, object] = {}
        self._streams: dict[str, str] = {}  # open stream id -> label
        self._journal: Journal | None = None
        self._watcher = None
        self._ended: set[str] = set()  # labels whose source has no more audio
        self._progress_at = time.monotonic()  # the engine's last sign of life (flush policy)
        self._abort_flush = threading.Event()
        self._closing = threading.Event()
        self.closed = threading.Event()
        self._cmds: queue.Queue = queue.Queue()
        self._journal_q: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._run, name="voxcap-controller", daemon=True)
        self._journal_thread = threading.Thread(target=self._run_journal, daemon=True,
                                                name="voxcap-journal-feed")
        self._worker.start()
        self._journal_thread.start()

    # ================================================================ public (any thread) ==
    def start_engine(self, settings) -> None:
        self._submit(self._do_start_engine, settings)

    def restart_engine(self, settings, reason: str = "settings changed") -> None:
        self._submit(self._do_restart_engine, settings, reason)

    def apply_engine_settings(self, settings, reason: str = "settings changed") -> None:
        """The restart policy: start an engine if none runs (or the last one failed), restart
        it if ``settings`` differ from its own in what can change it (not a graph mode on a
        machine without CUDA: ``engine.settings.changes_that_apply``), else nothing."""
        self._submit(self._do_apply_engine_settings, settings, reason)

    def start_captioning(self, source: str) -> None:
        self._submit(self._do_start_captioning, source)

    def stop_captioning(self) -> None:
        self._submit(self._do_stop_captioning)

    def pause_captioning(self) -> None:
        self._submit(self._do_pause)

    def resume_captioning(self) -> None:
        self._submit(self._do_resume)

    def toggle_pause(self) -> None:
        """Pause while capturing, resume while paused, nothing otherwise (one key for both)."""
        self._submit(lambda: self._do_resume() if self.state == Captioning.PAUSED else self._do_pause())

    def abort(self) -> None:
        """Give up on the words still being flushed (a second Ctrl-C): the streams are aborted
        at once instead of waited for."""
        self._abort_flush.set()

    def watch_devices(self) -> None:
        self._submit(self._do_watch_devices)

    def shutdown(self, engine_wait_s: float = 30.0) -> threading.Event:
        """Stop everything (flush, journal, engine) in the background; the returned event is
        set once done, and ``CaptioningState(CLOSED)`` is published. The engine's own
        shutdown is waited for ``engine_wait_s`` at most (an app that quits at once, its
        engine's processes dying with it, passes ``QUIT_ENGINE_WAIT_S``)."""
        self._closing.set()
        self._submit(self._do_shutdown, engine_wait_s)
        return self.closed

    @property
    def ready_info(self):
        eng = self.engine
        return eng.ready_info if eng is not None and eng.is_ready else None

    def stats(self):
        """The engine's measured stats now (``StatsSnapshot``), or None without an engine."""
        eng = self.engine
        return eng.stats.snapshot() if eng is not None else None

    def dropped_audio_s(self) -> float:
        """Audio that will never be captioned, all causes: capture losses (queue full, overflow,
        gaps), remote-engine gaps, held audio beyond ``hold_s``."""
        with self._lock:
            return sum(self._drops.values())

    def held_audio_s(self) -> float:
        with self._lock:
            return sum(self._held_samples.values()) / SAMPLE_RATE

    def journal_session(self):
        """The current session as journalled so far (``sessions.Session``), or None."""
        j = self._journal
        return j.session() if j is not None else None

    # ========================================================================= internals ==
    def _emit(self, event) -> None:
        try:
            self._out(event)
        except Exception:  # a broken consumer must not stop the controller
            log.exception("an event consumer failed on %s", type(event).__name__)

    def _submit(self, fn, *args) -> None:
        self._cmds.put((fn, args))

    def _run(self) -> None:
        while True:
            fn, args = self._cmds.get()
            try:
                if fn(*args) == "exit":
                    return
            except VoxcapError as exc:
                log.warning("%s: %s", getattr(fn, "__name__", fn), exc.message, exc_info=True)
                self._emit(AppProblem(exc.message, exc.fix, "engine"))
            except Exception as exc:  # noqa: BLE001 - reported, the controller goes on
                log.exception("the session controller failed in %s", getattr(fn, "__name__", fn))
                self._emit(AppProblem(f"Internal error: {exc!r}", "please report it (Help > "
                                      "Copy diagnostics, or the log file)", "app"))

    def _set_state(self, state: Captioning, message: str = "") -> None:
        self.state = state
        log.info("captioning %s%s", state, f": {message}" if message else "")
        labels = tuple(spec.label for spec, _ in self._sources)
        self._emit(CaptioningState(state, self.session_id, labels, message))

    # ------------------------------------------------------------------------- engine ----
    def _engine_sink(self, gen: int) -> Callable:
        def sink(event) -> None:  # on the engine's thread: quick
            if isinstance(event, _LIFECYCLE) and gen != self._generation:
                return  # a replaced engine stopping: not news
            journal = self._journal  # the one open now: it is closed only after these
            if journal is not None and isinstance(event, _JOURNALLED):
                self._journal_q.put((journal, event))
            if isinstance(event, SessionRolled):
                self.rollovers += 1
            if isinstance(event, (TextDelta, StreamFinished)):
                self._progress_at = time.monotonic()
            if isinstance(event, StreamGap):
                with self._lock:
                    self._drops[("gap", event.stream_id)] = event.total_lost_s
            self._emit(event)
            if isinstance(event, EngineFailed):
                self._submit(self._on_engine_failed, gen, event)
            elif isinstance(event, StreamFinished):
                self._submit(self._on_stream_finished, event)
        return sink

    def _do_start_engine(self, settings) -> None:
        if self._closing.is_set():
            return
        self._generation += 1
        gen = self._generation
        self.engine_settings = settings
        try:
            eng = self._engine_factory(settings, self._engine_sink(gen))
            eng.start()  # bad settings, missing model: raised here at once
        except VoxcapError as exc:
            self.engine = None
            self._emit(EngineFailed(exc.message, exc.fix))
            self._on_engine_failed(gen, None)
            return
        self.engine = eng
        threading.Thread(target=self._await_ready, args=(eng, gen), daemon=True,
                         name="voxcap-engine-wait").start()

    def _await_ready(self, eng, gen: int) -> None:
        while not self._closing.is_set() and gen == self._generation:
            try:
                eng.wait_ready(0.25)
            except EngineError:
                if eng.failure is not None:
                    return  # EngineFailed was published by the engine
                continue
            self._submit(self._on_engine_ready, gen)
            return

    def _on_engine_ready(self, gen: int) -> None:
        if gen != self._generation or self.engine is None:
            return
        if self._journal is not None:
            self._journal.update_settings(**engine_session_settings(
                self.engine_settings, self.engine.ready_info))
        if self.state in (Captioning.WAITING, Captioning.RESTARTING):
            self._open_streams()

    def _wait_settled(self, eng, timeout: float) -> None:
        """An engine still starting cannot be stopped cleanly: let it finish (or fail) first.
        One that can (``stops_while_starting``: the remote engine waiting for its server) is
        not waited for."""
        if getattr(eng, "stops_while_starting", False):
            return
        deadline = time.monotonic() + timeout
        while (eng.failure is None and not eng.is_ready and time.monotonic() < deadline
               and not self._closing.is_set()):  # quitting does not wait
            with contextlib.suppress(EngineError):
                eng.wait_ready(0.25)

    def _do_apply_engine_settings(self, settings, reason: str) -> None:
        eng = self.engine
        if eng is None or eng.failure is not None:
            if eng is not None:
                self._do_restart_engine(settings, reason)  # the failed one is shut down first
            else:
                self._do_start_engine(settings)
        elif settings != self.engine_settings:
            if changes_that_apply(self.engine_settings, settings, getattr(eng, "on_cuda", True)):
                self._do_restart_engine(settings, reason)
            else:  # a graph mode without CUDA: a restart would only stop the captions
                log.info("engine not restarted for %s: it changes nothing without a CUDA GPU",
                         reason)

    def _do_restart_engine(self, settings, reason: str) -> None:
        if self._closing.is_set():
            return
        log.info("restarting the engine: %s", reason)
        self._emit(EngineRestarting(reason, f"restarting the engine: {reason}"))
        if self.state in (Captioning.ON, Captioning.WAITING):
            with self._lock:
                for label in self._routes:
                    self._routes[label] = None  # from now on the captures' audio is held
            self._set_state(Captioning.RESTARTING, "captions resume once the engine is ready; the "
                                          "audio meanwhile is kept")
            self._flush_streams()
        old, self.engine = self.engine, None
        self._generation += 1  # the old engine's stop is not news
        if old is not None:
            self._wait_settled(old, 600.0)
            old.shutdown()
        self._do_start_engine(settings)

    def _on_engine_failed(self, gen: int, event) -> None:
        if gen != self._generation:
            return
        if self.state in CAPTURING:  # a paused session stays open: resuming says why it cannot
            message = event.message if event is not None else "the engine could not start"
            self._stop_captures()
            self._streams.clear()
            self._close_journal()
            self._set_state(Captioning.OFF, f"captioning stopped: {message}")

    def _on_stream_finished(self, event: StreamFinished) -> None:
        label = self._streams.pop(event.stream_id, None)
        if label is None or self.state != Captioning.ON:
            return
        if event.reason == "error":
            self._emit(AppProblem(f"{label}: the caption stream failed: {event.message}",
                                  "start captioning again; if it repeats, restart the engine "
                                  "(Settings)", "engine"))
        if not self._streams:
            self._stop_captures()
            self._close_journal()
            self._set_state(Captioning.OFF, event.message or f"the stream ended ({event.reason})")

    # ---------------------------------------------------------------------- captioning ----
    def _do_start_captioning(self, source: str) -> None:
        if self.state == Captioning.PAUSED:
            if source == self._source:
                self._do_resume()
                return
            self._do_stop_captioning()  # another source: a new session
        if self.state in ACTIVE or self._closing.is_set():
            return
        self._source = source
        if not self._engine_runs("start"):
            self._set_state(Captioning.OFF)
            return
        self._sources = []
        self._ended.clear()
        self._abort_flush.clear()
        self.rollovers = 0
        self._set_state(Captioning.STARTING)
        try:
            self._sources = self.audio.resolve(source)
        except VoxcapError as exc:
            self._emit(AppProblem(exc.message, exc.fix, "capture"))
            self._set_state(Captioning.OFF, exc.message)
            return
        with self._lock:
            self._held_warned.clear()
            for spec, _ in self._sources:
                self._routes[spec.label] = None
                self._held[spec.label] = deque()
                self._held_samples[spec.label] = 0
        failed = self._open_captures()
        if failed and len(failed) == len(self._sources):
            self._report_capture_failures(failed)
            self._stop_captures()
            self.session_id = ""  # no session was opened for it
            self._set_state(Captioning.OFF, failed[0][1].message)
            return
        if failed:
            self._drop_failed_halves(failed)
        self._open_journal()  # with the sources that really capture
        self._open_streams_or_wait()

    def _engine_runs(self, verb: str) -> bool:
        """True if the engine runs; else why captioning cannot ``verb`` is said, with the fix."""
        eng = self.engine
        if eng is not None and eng.failure is None:
            return True
        fail = eng.failure if eng is not None else None
        self._emit(AppProblem(f"Captioning cannot {verb}: the engine is not running"
                              + (f" ({fail.message})" if fail else "") + ".",
                              (fail.fix if fail and fail.fix else "fix the engine's problem "
                               f"shown in the status line (Settings), then {verb} again"),
                              "engine"))
        return False

    def _open_captures(self) -> list[tuple]:
        """Start a capture for every source; returns those that could not start (spec, error)."""
        failed = []
        for spec, _desc in self._sources:
            try:
                self._captures[spec.label] = self.audio.open(
                    spec, lambda block, label=spec.label: self._on_block(label, block),
                    self._on_capture_event)
            except VoxcapError as exc:
                log.warning("%s could not start: %s", spec.label, exc.message, exc_info=True)
                failed.append((spec, exc))
        return failed

    def _report_capture_failures(self, failed: list[tuple]) -> None:
        for spec, exc in failed:
            self._emit(AppProblem(exc.message if len(failed) == 1 else f"{spec.label}: {exc.message}",
                                  exc.fix, "capture"))

    def _open_streams_or_wait(self) -> None:
        if self.engine is not None and self.engine.is_ready:
            self._open_streams()
        else:
            self._set_state(Captioning.WAITING, "waiting for the engine; the audio meanwhile is kept")

    def _drop_failed_halves(self, failed: list) -> None:
        """A pair of which one half could not start goes on with the other: one notice per
        failed half, naming it, the problem and its fix."""
        gone = {spec.label for spec, _ in failed}
        self._sources = [(spec, desc) for spec, desc in self._sources if spec.label not in gone]
        left = " and ".join(f'"{spec.label}"' for spec, _ in self._sources)
        with self._lock:
            for label in gone:
                self._routes.pop(label, None)
                self._held.pop(label, None)
                self._held_samples.pop(label, None)
        for spec, exc in failed:
            self._emit(AppProblem(f"{spec.label}: {exc.message.rstrip('.')}. Captioning goes on with "
                                  f"{left} only.", exc.fix, "capture"))

    def _open_streams(self) -> None:
        eng = self.engine
        for spec, desc in self._sources:
            label = spec.label
            try:
                sid = eng.open_stream(label)
            except VoxcapError as exc:
                self._emit(AppProblem(f"{label}: {exc.message}", exc.fix, "engine"))
                continue
            self.clock.open(sid)
            self._streams[sid] = label
            if self._journal is not None:
                self._journal.stream_opened(sid, label=label, source=desc)
            self._emit(StreamOpened(sid, label, desc))
            with self._lock:  # held audio first, in order, then the live blocks
                held = self._held.get(label) or deque()
                while held:
                    samples, at = held.popleft()
                    eng.push_audio(sid, samples)
                    self.clock.pushed(sid, samples.size, at)
                self._held_samples[label] = 0
                if label in self._routes:
                    self._routes[label] = sid
            if label in self._ended:  # a file read to its end while the engine started
                eng.close_stream(sid)
        if self._streams:
            self._set_state(Captioning.ON)
            if self._all_ended():
                self._do_stop_captioning("end of the audio")
        else:
            self._stop_captures()
            self._close_journal()
            self._set_state(Captioning.OFF, "no caption stream could be opened")

    def _on_block(self, label: str, block) -> None:
        """A capture's audio (on its thread): to the engine, or held while it is not ready."""
        samples = block.samples
        with self._lock:
            if label not in self._routes:
                return  # captioning stopped
            sid = self._routes[label]
            if sid is None:
                self._hold(label, samples, block.captured_at)
                return
            eng = self.engine
            if eng is None:
                return
            eng.push_audio(sid, samples)
            self.clock.pushed(sid, samples.size, block.captured_at)

    def _hold(self, label: str, samples, captured_at: float) -> None:
        held = self._held.setdefault(label, deque())
        held.append((samples, captured_at))
        self._held_samples[label] = self._held_samples.get(label, 0) + samples.size
        if not getattr(self.audio, "live", True):
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

    def _on_capture_event(self, event) -> None:
        if isinstance(event, CaptureLoss):
            with self._lock:
                self._drops[(event.source, event.kind)] = event.total_seconds
        self._emit(event)
        if isinstance(event, SourceEnded):
            self._submit(self._on_source_ended, event)

    def _on_source_ended(self, event: SourceEnded) -> None:
        """A file's last block is in: close its stream (the engine flushes its last words);
        when every source has ended, stop captioning as if asked to."""
        label = event.source
        if self.state not in ACTIVE or label not in self._routes:
            return
        if event.error:
            self._emit(AppProblem(f"{label}: {event.error}", "check the file", "capture"))
        self._ended.add(label)
        if self.state != Captioning.ON:
            return  # no stream yet: _open_streams closes it after its held audio
        with self._lock:
            sid = self._routes.get(label)
        if sid is not None and self.engine is not None:
            self.engine.close_stream(sid)
        if self._all_ended():
            self._do_stop_captioning(event.message)

    def _all_ended(self) -> bool:
        return all(spec.label in self._ended for spec, _ in self._sources)

    def _stop_captures(self) -> None:
        caps, self._captures = self._captures, {}
        for label, cap in caps.items():
            try:
                cap.stop()  # the last captured blocks are still delivered
            except Exception:  # noqa: BLE001 - the others are stopped all the same
                log.warning("stopping the capture of %s failed", label, exc_info=True)
        with self._lock:
            self._routes.clear()
            self._held.clear()
            self._held_samples.clear()

    def _flush_streams(self) -> None:
        """Close the open streams (their delayed words are flushed) and wait for them while
        the engine makes progress; abort them after ``flush_timeout_s`` without any, or at
        once on ``abort()``."""
        eng, sids = self.engine, list(self._streams)
        self._streams.clear()
        if eng is None:
            return
        for sid in sids:
            eng.close_stream(sid)  # never raises: a stopped engine's streams are done
        self._progress_at = time.monotonic()
        pending = list(sids)
        while pending:
            if eng.wait_stream(pending[0], 0.1):
                pending.pop(0)
                continue
            stalled = time.monotonic() - self._progress_at > self.flush_timeout_s
            if stalled or self._abort_flush.is_set():
                why = ("given up on request" if not stalled else
                       f"the engine produced nothing for {self.flush_timeout_s:g} s")
                log.warning("flush of %s aborted: %s", pending, why)
                self._emit(AppProblem(f"The last words were not all captioned: {why}.",
                                      "" if not stalled else "see the log; restart the engine "
                                      "if it persists", "engine"))
                for sid in pending:
                    eng.abort_stream(sid)
                for sid in pending:
                    eng.wait_stream(sid, 5.0)
                return

    def _do_pause(self) -> None:
        if self.state not in CAPTURING:
            return
        if not getattr(self.audio, "live", True):
            self._emit(AppProblem("A file cannot be paused.", "stop it, or let it run to its end",
                                  "capture"))
            return
        caps, self._captures = self._captures, {}
        for label, cap in caps.items():  # their last blocks still reach the streams
            try:
                cap.stop()
            except Exception:  # noqa: BLE001 - the others are stopped all the same
                log.warning("stopping the capture of %s failed", label, exc_info=True)
        self._flush_streams()
        with self._lock:  # audio held while the engine was not ready stays for the resume
            for label in self._routes:
                self._routes[label] = None
        if self._journal is not None:
            self._journal.paused()
        self._set_state(Captioning.PAUSED, "paused: nothing is captured until you resume; the session "
                                  "and its captions are kept")

    def _do_resume(self) -> None:
        if self.state != Captioning.PAUSED or self._closing.is_set():
            return
        if not self._engine_runs("resume"):
            return  # still paused
        self._abort_flush.clear()
        failed = self._open_captures()
        if failed and len(failed) == len(self._sources):
            self._report_capture_failures(failed)
            self._captures.clear()
            return  # still paused: resume again once the device is back
        if failed:
            self._drop_failed_halves(failed)
        if self._journal is not None:
            self._journal.resumed()
        self._open_streams_or_wait()

    def _do_stop_captioning(self, message: str = "") -> None:
        if self.state not in ACTIVE:
            return
        self._set_state(Captioning.STOPPING, "flushing the last words")
        self._stop_captures()
        self._flush_streams()
        self._close_journal()
        self._set_state(Captioning.OFF, message)

    # ------------------------------------------------------------------------- journal ----
    def _open_journal(self) -> None:
        self._close_journal()
        if not self._journal_enabled:
            self.session_id = ""
            return
        sources = {spec.label: desc for spec, desc in self._sources}
        settings = engine_session_settings(self.engine_settings, self.ready_info, sources)
        kind = getattr(self.audio, "journal_kind", "live")
        title = " + ".join(sources) if kind != "live" else " + ".join(sources.values())
        self._journal = Journal.create(settings, kind=kind, title=title,
                                       root=self._journal_root, on_status=self._emit)
        self.session_id = self._journal.session_id

    def _close_journal(self) -> None:
        """Close the journal once every event queued for it is written."""
        journal, self._journal = self._journal, None
        if journal is None:
            return
        done = threading.Event()

        def close() -> None:
            journal.close()
            done.set()
        self._journal_q.put(close)
        done.wait(30.0)

    def _run_journal(self) -> None:
        while True:
            item = self._journal_q.get()
            if item is None:
                return
            try:
                if callable(item):
                    item()
                else:
                    journal, event = item
                    journal.on_event(event)
            except Exception as exc:  # noqa: BLE001 - the journal reports its own I/O problems
                log.exception("the journal failed")
                self._emit(AppProblem(f"Journal error: {exc!r}", "", "journal"))

    # --------------------------------------------------------------------------- misc ----
    def _do_watch_devices(self) -> None:
        if self._watcher is None and not self._closing.is_set():
            try:
                self._watcher = self.audio.watch(self._emit)
            except VoxcapError as exc:
                self._emit(AppProblem(exc.message, exc.fix, "capture"))

    def _do_shutdown(self, engine_wait_s: float) -> str:
        try:
            if self.state in ACTIVE:
                self._do_stop_captioning()
            if self._watcher is not None:
                try:
                    self._watcher.stop()
                except Exception:  # noqa: BLE001 - shutting down all the same
                    log.warning("stopping the device watcher failed", exc_info=True)
            eng, self.engine = self.engine, None
            self._generation += 1
            if eng is not None:
                # the captions are flushed and journalled by now; a start still under way is
                # not waited for to settle (minutes): its shutdown is given engine_wait_s
                eng.shutdown(timeout=engine_wait_s)
            self._journal_q.put(None)
            self._journal_thread.join(10.0)
        finally:
            self._set_state(Captioning.CLOSED)  # before ``closed`` is set: its waiters see the state
            self.closed.set()
        return "exit"
