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

What it promises is listed in ``app.session`` (the package's docstring), with its rooms.

The rooms (``app.session``, one job each) hold the parts; here is the session's course: what
starting, pausing, resuming, stopping and the engine's news do to captures, streams, journal
and the state (``session.state_machine``: which state may follow which).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..captions.glossary import Glossary
from ..errors import VoxcapError
from ..events import (
    AppProblem,
    Captioning,
    CaptureLoss,
    EngineRestarting,
    SourceEnded,
    StreamFinished,
)
from ..framing import DEFAULT_DELAY_MS
from .lag import CaptureClock
from .session.caption_path import CaptionPath
from .session.caption_streams import CaptionStreams
from .session.caption_watchdog import CaptionWatchdog
from .session.capture_routing import HOLD_S, CaptureRouting
from .session.command_thread import EXIT, CommandThread
from .session.device_watch import DeviceWatch
from .session.engine_lifecycle import EngineLifecycle, default_engine_factory
from .session.journal_feed import JournalFeed
from .session.readings import SessionReadings
from .session.session_sources import SessionSources
from .session.state_machine import ACTIVE, CAPTURING, CaptioningStateMachine
from .session.stream_flush import FLUSH_TIMEOUT_S, StreamFlush
from .sources import AudioSources

__all__ = ["ACTIVE", "CAPTURING", "FLUSH_TIMEOUT_S", "HOLD_S", "QUIT_ENGINE_WAIT_S",
           "SessionController", "default_engine_factory"]
log = logging.getLogger(__name__)
# An app quitting at once waits this long for the engine's shutdown, once the captions are
# flushed and journalled: vLLM's teardown is of no use to an app that leaves (1.3 s, then 0.7 s
# of garbage collection on the tiny CPU engine; 14 s measured on a busy CPU), and its processes
# die with the app. Ctrl+Q promises 5 s in all (docs/guide/accessibility.md).
QUIT_ENGINE_WAIT_S = 1.0


class SessionController(SessionReadings):
    def __init__(self, publish: Callable[[object], None], *, engine_factory: Callable | None = None,
                 audio: AudioSources | None = None, journal: bool = True,
                 journal_root=None, hold_s: float = HOLD_S,
                 flush_timeout_s: float = FLUSH_TIMEOUT_S, verbose: bool = False) -> None:
        self._out = publish
        self.audio = audio or AudioSources()
        self.clock = CaptureClock()
        self.session_id = ""
        self._sources = SessionSources(self._emit)
        self._closing = threading.Event()
        self.closed = threading.Event()
        self._states = CaptioningStateMachine(self._emit)
        self._flush = StreamFlush(self._emit, flush_timeout_s)
        self._journal = JournalFeed(self._emit, journal_root, enabled=journal)
        # called when the last words are flushed, before the journal closes: the line
        # translation finishes its queued lines then, so their records are journalled
        self.before_journal_close: list[Callable[[], object]] = []
        self._devices = DeviceWatch(self._emit)
        self._commands = CommandThread(self._emit)
        self._submit = self._commands.submit
        self._engine = EngineLifecycle(engine_factory or default_engine_factory(verbose),
                                       self._on_engine_event, self._submit, self._on_engine_ready,
                                       self._on_engine_failed, self._closing)
        self.watchdog = CaptionWatchdog(self._emit, self._fresh_session, self._delay_s)
        self._routing = CaptureRouting(self._emit, self.clock, lambda: self._engine.engine,
                                       lambda: getattr(self.audio, "live", True), hold_s,
                                       pushed=self.watchdog.audio)
        self._streams = CaptionStreams(self._emit, self.clock, self._journal, self._routing,
                                       self._flush, watch=self.watchdog.watch)
        self._path = CaptionPath(self._emit, self._journal, self._flush, self.watchdog,
                                 self._routing,
                                 lambda ev: self._submit(self._on_stream_finished, ev))

    # ================================================================ public (any thread) ==
    def start_engine(self, settings) -> None:
        self._submit(self._engine.start, settings)

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

    def switch_source(self, source: str) -> None:
        """Caption ``source`` from now on if a session is open (a new session), else nothing.
        Decided when the command runs, after those before it: choices made in a row, while
        the previous switch still runs, end on the last one."""
        self._submit(self._do_switch_source, source)

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
        self._flush.abort()

    def set_glossary(self, glossary: Glossary) -> None:
        """The word list whose names and terms are corrected in finished words, from the next
        word on (an empty one: none)."""
        self._path.set_glossary(glossary)

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

    def watch_captions(self, no_captions_after_s: float, fresh_session_after_s: float) -> None:
        """The caption watchdog's thresholds (``AppSettings``): speech without captions is said
        after the first, and a fresh engine session tried after the second."""
        self.watchdog.no_captions_after_s = no_captions_after_s
        self.watchdog.fresh_session_after_s = fresh_session_after_s

    # ========================================================================= internals ==
    def _emit(self, event) -> None:
        try:
            self._out(event)
        except Exception:  # a broken consumer must not stop the controller
            log.exception("an event consumer failed on %s", type(event).__name__)

    def _set_state(self, state: Captioning, message: str = "") -> None:
        self._states.move_to(state, self.session_id, self._sources.labels, message)

    def record_line(self, event) -> None:
        """A finished line's language and translation (``LineTranslated``, from the translation
        worker's thread): journalled with the session's captions, then out."""
        self._path.record_line(event)

    # ------------------------------------------------------------------ engine's news ----
    def _on_engine_event(self, event) -> None:
        """Every event of the current engine, on its thread (``session.caption_path``)."""
        self._path.feed(event)

    def _fresh_session(self, stream_id: str) -> bool:
        """The watchdog asks for a fresh engine session of a stream (a rollover on demand)."""
        fresh = getattr(self.engine, "fresh_session", None)
        return bool(fresh(stream_id)) if fresh is not None else False

    def _delay_s(self) -> float:
        return getattr(self.engine_settings, "delay_ms", DEFAULT_DELAY_MS) / 1000.0

    def _on_engine_ready(self, gen: int) -> None:
        if not self._engine.current(gen) or self.engine is None:
            return
        self._journal.engine_ready(self.engine_settings, self.engine.ready_info)
        if self.state in (Captioning.WAITING, Captioning.RESTARTING):
            self._open_streams()

    def _on_engine_failed(self, gen: int, event) -> None:
        if not self._engine.current(gen):
            return
        if self.state in CAPTURING:  # a paused session stays open: resuming says why it cannot
            message = event.message if event is not None else "the engine could not start"
            self._routing.close()
            self._streams.forget()
            self._journal.close()
            self._set_state(Captioning.OFF, f"captioning stopped: {message}")

    def _on_stream_finished(self, event: StreamFinished) -> None:
        label = self._streams.finished(event.stream_id)
        if label is None or self.state != Captioning.ON:
            return
        if event.reason == "error":
            self._emit(AppProblem(f"{label}: the caption stream failed: {event.message}",
                                  "start captioning again; if it repeats, restart the engine "
                                  "(Settings)", "engine"))
        if not self._streams:
            self._routing.close()
            self._journal.close()
            self._set_state(Captioning.OFF, event.message or f"the stream ended ({event.reason})")

    def _do_apply_engine_settings(self, settings, reason: str) -> None:
        action = self._engine.policy(settings, reason)
        if action == "start":
            self._engine.start(settings)
        elif action == "restart":
            self._do_restart_engine(settings, reason)  # a failed engine is shut down first

    def _do_restart_engine(self, settings, reason: str) -> None:
        if self._closing.is_set():
            return
        log.info("restarting the engine: %s", reason)
        self._emit(EngineRestarting(reason, f"restarting the engine: {reason}"))
        if self.state in (Captioning.ON, Captioning.WAITING):
            self._routing.hold_all()  # from now on the captures' audio is held
            self._set_state(Captioning.RESTARTING, "captions resume once the engine is ready; the "
                                          "audio meanwhile is kept")
            self._streams.flush(self.engine)
        self._engine.replace(settings)

    # ------------------------------------------------------------------------ captures ----
    def _on_capture_event(self, event) -> None:
        if isinstance(event, CaptureLoss):
            self._routing.record_loss((event.source, event.kind), event.total_seconds)
        self._emit(event)
        if isinstance(event, SourceEnded):
            self._submit(self._on_source_ended, event)

    def _on_source_ended(self, event: SourceEnded) -> None:
        """A file's last block is in: close its stream (the engine flushes its last words);
        when every source has ended, stop captioning as if asked to."""
        label = event.source
        if self.state not in ACTIVE or not self._routing.routed(label):
            return
        if event.error:
            self._emit(AppProblem(f"{label}: {event.error}", "check the file", "capture"))
        self._sources.end(label)
        if self.state != Captioning.ON:
            return  # no stream yet: _open_streams closes it after its held audio
        sid = self._routing.stream_of(label)
        if sid is not None and self.engine is not None:
            self.engine.close_stream(sid)
        if self._sources.all_ended():
            self._do_stop_captioning(event.message)

    def _open_captures(self) -> str | None:
        """Captures for the session's sources, which goes on with those that start; None, or
        why none could (each failure said)."""
        failed = self._routing.open_captures(self._sources.resolved, self.audio,
                                             self._on_capture_event)
        why_none = self._sources.drop_failed(failed)
        if why_none is None:
            self._routing.forget(spec.label for spec, _ in failed)
        return why_none

    # ------------------------------------------------------------------------- streams ----
    def _open_streams_or_wait(self) -> None:
        if self._engine.ready:
            self._open_streams()
        else:
            self._set_state(Captioning.WAITING, "waiting for the engine; the audio meanwhile is kept")

    def _open_streams(self) -> None:
        self._streams.open_all(self.engine, self._sources.resolved, self._sources.ended)
        if self._streams:
            self._set_state(Captioning.ON)
            if self._sources.all_ended():
                self._do_stop_captioning("end of the audio")
        else:
            self._routing.close()
            self._journal.close()
            self._set_state(Captioning.OFF, "no caption stream could be opened")

    # ---------------------------------------------------------------------- captioning ----
    def _do_start_captioning(self, source: str) -> None:
        if self.state == Captioning.PAUSED:
            if source == self._sources.asked:
                self._do_resume()
                return
            self._do_stop_captioning()  # another source: a new session
        if self.state in ACTIVE or self._closing.is_set():
            return
        self._sources.asked = source
        if not self._engine_runs("start"):
            self._set_state(Captioning.OFF)
            return
        self._sources.begin(source)
        self._flush.rearm()
        self._path.rollovers = 0
        self._set_state(Captioning.STARTING)
        try:
            self._sources.resolved = self.audio.resolve(source)
        except VoxcapError as exc:
            self._emit(AppProblem(exc.message, exc.fix, "capture"))
            self._set_state(Captioning.OFF, exc.message)
            return
        self._routing.expect(self._sources.labels)
        why_none = self._open_captures()
        if why_none is not None:
            self._routing.close()
            self.session_id = ""  # no session was opened for it
            self._set_state(Captioning.OFF, why_none)
            return
        self._open_journal()  # with the sources that really capture
        self._open_streams_or_wait()

    def _engine_runs(self, verb: str) -> bool:
        """True if the engine runs; else why captioning cannot ``verb`` is said, with the fix."""
        problem = self._engine.refusal(verb)
        if problem is not None:
            self._emit(problem)
        return problem is None

    def _open_journal(self) -> None:
        self.session_id = self._journal.open(self.engine_settings, self.ready_info,
                                             self._sources.descriptions(),
                                             getattr(self.audio, "journal_kind", "live"))

    def _do_pause(self) -> None:
        if self.state not in CAPTURING:
            return
        if not getattr(self.audio, "live", True):
            self._emit(AppProblem("A file cannot be paused.", "stop it, or let it run to its end",
                                  "capture"))
            return
        self._routing.stop_captures()  # their last blocks still reach the streams
        self._streams.flush(self.engine)
        self._routing.hold_all()  # audio held while the engine was not ready stays for the resume
        self._journal.paused()
        self._set_state(Captioning.PAUSED, "paused: nothing is captured until you resume; the session "
                                  "and its captions are kept")

    def _do_resume(self) -> None:
        if self.state != Captioning.PAUSED or self._closing.is_set():
            return
        if not self._engine_runs("resume"):
            return  # still paused
        self._flush.rearm()
        if self._open_captures() is not None:
            self._routing.stop_captures()
            return  # still paused: resume again once the device is back
        self._journal.resumed()
        self._open_streams_or_wait()

    def _do_switch_source(self, source: str) -> None:
        if self.state not in ACTIVE or source == self._sources.asked:
            return
        self._do_stop_captioning()
        self._do_start_captioning(source)

    def _do_stop_captioning(self, message: str = "") -> None:
        if self.state not in ACTIVE:
            return
        self._set_state(Captioning.STOPPING, "flushing the last words")
        self._routing.close()
        self._streams.flush(self.engine)
        for finish in self.before_journal_close:
            finish()
        self._journal.close()
        self._set_state(Captioning.OFF, message)

    # --------------------------------------------------------------------------- misc ----
    def _do_watch_devices(self) -> None:
        if not self._closing.is_set():
            self._devices.start(self.audio)

    def _do_shutdown(self, engine_wait_s: float) -> str:
        try:
            if self.state in ACTIVE:
                self._do_stop_captioning()
            self._devices.stop()
            self._engine.shutdown(engine_wait_s)  # the captions are flushed and journalled by now
            self._journal.stop()
            self.watchdog.stop()
        finally:
            self._set_state(Captioning.CLOSED)  # before ``closed`` is set: its waiters see the state
            self.closed.set()
        return EXIT
