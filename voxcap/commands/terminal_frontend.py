"""The terminal front end of the session controller, shared by ``voxcap live`` and
``voxcap transcribe``: the controller (``voxcap.app.controller``) does the work, exactly as
under the GUI; this prints its events and turns Ctrl-C and ``--duration`` into its commands.

Captions go to stdout as they arrive (with several streams a new line with the speaker's label
whenever the speaker changes); engine stages, capture events and problems to stderr, one line
each. The first Ctrl-C stops the sources and flushes the words the engine still holds; a second
one gives up on them. SIGTERM (a logout, ``kill``) and SIGHUP (the terminal window closed) stop
as Ctrl-C does; a second one leaves at once (``voxcap.quit_signals``). A terminal gone (SIGHUP)
fails every write: the lines then go to the log only (``Terminal``).
At the end: the journal's session id, the transcript file, and what was
measured (audio dropped, caption lag, engine step times).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from .. import logs
from ..app.controller import SessionController
from ..app.glossary_file import read_terms
from ..app.lag import RecentValues
from ..app.line_translation import LineTranslation
from ..app.notices import notice_for
from ..app.settings import AppSettings
from ..captions.export import check_export_path, export
from ..captions.glossary import Glossary
from ..captions.masking import Masker, PieceMasker
from ..engine.stats import StatsSnapshot
from ..errors import EngineError, VoxcapError
from ..eventhub import EventHub
from ..events import (
    AppProblem,
    Captioning,
    CaptioningState,
    EngineFailed,
    EngineProgress,
    EngineReady,
    LineTranslated,
    StreamFinished,
    StreamOpened,
    TextDelta,
)
from ..quit_signals import QuitSignals, leave_at_once
from ..settings_schema import add_setting_flags
from ..translate.worker import QUEUE_LINES
from .flag_words import in_flags
from .options import add_engine_options, make_engine, settings_from_flags
from .sessions import add_export_options, export_kwargs

log = logging.getLogger(__name__)


def add_run_options(p, engine_help: dict[str, str] | None = None) -> None:
    """The options every captioning command has: transcript file, journal, quiet, engine
    (``engine_help``: words the command adds to an engine flag's help)."""
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the transcript at the end (.srt, .vtt, .txt or .jsonl)")
    p.add_argument("--no-journal", action="store_true",
                   help="do not keep this run as a session (see `voxcap sessions`)")
    add_export_options(p)
    add_setting_flags(p, AppSettings, ["glossary_file", "no_captions_after_s", "fresh_session_after_s",
                                      "no_sound_after_s", "translate_to"])
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print neither captions nor progress and events")
    add_engine_options(p, more_help=engine_help)


class Terminal:
    """Captions on stdout as they arrive; notices on stderr, after ending a caption line. Once a
    write fails (the terminal closed: EIO; a pipe's reader gone: EPIPE) the lines go to the log
    and the captions nowhere, and stdout and stderr lead to /dev/null, so that nothing else
    fails on them (a traceback at the exit's flush)."""

    def __init__(self, quiet: bool, masker: Masker | None = None) -> None:
        self.quiet = quiet
        self.gone = False
        self.labels: dict[str, str] = {}  # stream id -> label
        self.current: str | None = None
        self.mid_line = False
        # --mask-profanity: printed as the files are written (a word once whole)
        self.masking = PieceMasker(masker) if masker is not None else None

    def text(self, stream_id: str, text: str) -> None:
        if self.quiet or not text:
            return
        if self.masking is not None:
            self._write(stream_id, self.masking.feed(stream_id, text))
        else:
            self._write(stream_id, text)

    def release(self) -> None:
        """The words the masking still holds (the streams ended)."""
        if self.masking is not None and not self.quiet:
            for stream_id in self.masking.held():
                self._write(stream_id, self.masking.release(stream_id))

    def _write(self, stream_id: str, text: str) -> None:
        if not text or self.gone:
            return
        if len(set(self.labels.values())) > 1 and stream_id != self.current:
            text = ("\n" if self.mid_line else "") + f"[{self.labels[stream_id]}] " + text.lstrip()
        self.current = stream_id
        self.mid_line = True
        self._out(sys.stdout, text)

    def line(self, msg: str, *, caption: bool = False) -> None:
        """``msg`` on stderr; ``caption``: it holds caption text (kept out of the log)."""
        if self.quiet:
            return
        self.end_line()
        if not self._out(logs.terminal(), in_flags(msg) + "\n"):  # stderr, also while vLLM starts
            log.info("%s", logs.caption_text(msg) if caption else in_flags(msg))

    def error(self, msg: str) -> None:
        """The last word on a failure, shown even with --quiet."""
        if not self._out(sys.stderr, f"error: {in_flags(msg)}\n"):
            log.error("%s", in_flags(msg))

    def end_line(self) -> None:
        if self.mid_line:
            self.mid_line = False
            self.current = None
            self._out(sys.stdout, "\n")

    def _out(self, stream, text: str) -> bool:
        """Whether ``text`` reached the terminal."""
        if self.gone:
            return False
        try:
            stream.write(text)
            stream.flush()
            return True
        except OSError as exc:
            self.gone = True
            log.warning("the terminal is gone (%s): voxcap's lines go to this log only",
                        exc.strerror or exc)
            _to_devnull(stream, sys.stdout, sys.stderr)
            return False


def _to_devnull(*streams) -> None:
    """The file descriptors of ``streams`` lead to /dev/null; what their buffers hold goes there.
    A file is left as it is (stderr is the library log while vLLM starts: logs.py)."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in streams:
        try:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                os.dup2(null, stream.fileno())
        except (OSError, ValueError):  # no file descriptor (a test's capture)
            log.info("%r not sent to %s", stream, os.devnull, exc_info=True)
    os.close(null)


@dataclass
class RunResult:
    deltas: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)  # stream id -> label
    failure: str | None = None
    session_id: str = ""
    wall_s: float = 0.0
    stats: StatsSnapshot | None = None  # at the end
    dropped_s: float = 0.0
    lag: RecentValues = field(default_factory=lambda: RecentValues(keep_s=1e9))
    lines: list = field(default_factory=list)  # LineTranslated: languages and translations


class _SignalCounted:
    """While captioning, SIGINT (Ctrl-C: stop) and SIGTSTP (Ctrl-Z: pause or resume) only
    count (the loop acts on them between events): raised as KeyboardInterrupt wherever the main
    thread happened to be (showing a caption, inside the controller), a Ctrl-C on a loaded
    machine could skip the flush or leave the run going. A counter, not a queue: a signal
    handler must not take a lock the interrupted code may hold."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        self.signum = signum
        self.count = 0
        self._installed = False
        self._old: Callable[[int, FrameType | None], Any] | int | None = None  # signal.getsignal's

    def _count(self, signum, frame) -> None:
        self.count += 1

    def __enter__(self) -> _SignalCounted:
        if signal.getsignal(self.signum) == signal.SIG_IGN:
            return self  # started with it ignored (nohup, `cmd &` in a script): kept so
        try:
            self._old = signal.signal(self.signum, self._count)
            self._installed = True
        except ValueError:  # not the main thread (a test's): as before
            log.debug("signal %s handler not installed (not the main thread)", self.signum)
        return self

    def __exit__(self, *exc) -> None:
        if self._installed:  # None: a handler set outside Python; Python's own is the default
            default = signal.default_int_handler if self.signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(self.signum, self._old if self._old is not None else default)


class CaptionRun:
    """One captioning run in a terminal: engine start, captioning ``source`` from ``audio``
    (``app.sources``) until it ends, ``duration`` passes or Ctrl-C, then a clean stop."""

    def __init__(self, args, settings, audio, *, name: str, show_capture: bool = True) -> None:
        self.args, self.settings, self.audio = args, settings, audio
        # a bad file name or word list fails now, not after the engine's long start
        self.out_path = check_export_path(args.output) if args.output else None
        self.out_options = export_kwargs(args)
        glossary_file = settings_from_flags(args).glossary_file  # only a list given: --glossary
        glossary = Glossary(read_terms(glossary_file)) if glossary_file else Glossary(())
        self.term = Terminal(args.quiet, self.out_options["masker"])
        self.name = name  # "live" / "transcribe": the prefix of this run's own lines
        self.show_capture = show_capture
        self.events: queue.Queue = queue.Queue()
        self.quit = QuitSignals()  # SIGTERM, SIGHUP: as Ctrl-C
        self.hub = EventHub()  # the controller's events: this terminal, and --share
        self.hub.subscribe(self.events.put)
        self.result = RunResult()
        self.ctl = SessionController(  # make_engine: -v reaches the engine (vLLM's log)
            self.hub.publish, audio=audio, journal=not args.no_journal,
            engine_factory=lambda s, sink: make_engine(args, on_event=sink, settings=s))
        self.ctl.set_glossary(glossary)
        if glossary:
            self.term.line(f"{name}: word list: {len(glossary.terms)} names and terms")
        watch = settings_from_flags(args)  # the caption watchdog's flags, checked
        self.ctl.watch_captions(watch.no_captions_after_s, watch.fresh_session_after_s)
        self.ctl.silence_after_s = watch.no_sound_after_s
        # each finished line's language, and its translation with --translate-to; a file's
        # lines all (it is read faster than speech), a live source's the latest
        self.lines = LineTranslation(
            self.ctl.record_line, target=settings_from_flags(args).translation.translate_to,
            on_notice=lambda text: self.term.line(f"{name}: {text}"),
            queue_lines=QUEUE_LINES if getattr(audio, "live", True) else 100_000)
        self.hub.subscribe(self.lines.on_event)
        live = getattr(audio, "live", True)
        self.ctl.before_journal_close.append(lambda: self.lines.finish(5.0 if live else 120.0))

    def run(self, source: str = "", duration: float | None = None) -> RunResult:
        with self.quit:
            try:
                self._start_engine()
                self.ctl.start_captioning(source)
                self._caption(duration)
                r = self.result
                r.stats, r.dropped_s = self.ctl.stats(), self.ctl.dropped_audio_s()
            finally:
                self.ctl.shutdown().wait(60)
                self.lines.close()
                self._drain()
        return self.result

    def _start_engine(self) -> None:
        say = self.term.line
        self.ctl.start_engine(self.settings)
        noted = ""
        while True:
            try:
                event = self.events.get(timeout=0.2)
            except queue.Empty:
                if self.quit.received:  # as Ctrl-C does now
                    log.info("%s received while the engine starts: stopping", self.quit.received)
                    raise KeyboardInterrupt from None
                continue
            if isinstance(event, EngineProgress):
                say(f"engine: {event.stage}"
                    + (f" ({event.elapsed_s:.0f} s)" if event.elapsed_s >= 1 else ""))
                if event.note and event.note != noted:
                    say(f"engine: note: {event.note}")
                    noted = event.note
            elif isinstance(event, EngineReady):
                say(f"engine: ready in {event.start_seconds:.1f} s on {event.device}; graph mode "
                    f"{event.resolved_graph_mode} (requested {event.requested_graph_mode})")
                if event.precision_line or event.precision:
                    say(f"engine: precision: {event.precision_line or event.precision}")
                for note in event.notes:
                    say(f"engine: note: {note}")
                return
            elif isinstance(event, EngineFailed):
                raise EngineError(event.message, event.fix)

    def _caption(self, duration: float | None) -> None:
        # Ctrl-Z pauses a live source instead of suspending the process (a file cannot pause)
        pausable = getattr(self.audio, "live", True)
        # a second SIGINT counter would take Ctrl-C from the first: a file run gets none
        with _SignalCounted(signal.SIGINT) as ctrl_c, \
                (_SignalCounted(signal.SIGTSTP) if pausable else contextlib.nullcontext()) as ctrl_z:
            self._caption_loop(duration, ctrl_c, ctrl_z)

    def _caption_loop(self, duration: float | None, ctrl_c: _SignalCounted,
                      ctrl_z: _SignalCounted | None) -> None:
        deadline = None
        stopping = aborted = False
        started = False
        self._pauses_seen = 0
        problems: list[AppProblem] = []  # before captioning starts: kept for the outcome
        t0 = time.perf_counter()
        seen = 0  # Ctrl-Cs acted on
        while True:
            try:
                if ctrl_c.count > seen:
                    seen += 1
                    raise KeyboardInterrupt
                self._pause_on_ctrl_z(ctrl_z, started and not stopping)
                if not stopping:
                    stopping = self._stop_on_signal() or self._stop_at(deadline, duration)
                try:
                    event = self.events.get(timeout=0.2)
                except queue.Empty:
                    continue
            except KeyboardInterrupt:  # first Ctrl-C: stop and flush; second: give up on it
                if not stopping:
                    stopping = True
                    self.term.line(f"{self.name}: interrupted (Ctrl-C again to abort): flushing")
                    self.ctl.stop_captioning()
                elif not aborted:
                    aborted = True
                    self.ctl.abort()
                continue
            if isinstance(event, CaptioningState):
                if event.state == Captioning.ON and not started:
                    started = True
                    t0 = time.perf_counter()
                    deadline = time.monotonic() + duration if duration else None
                    self._say_started(duration, ctrl_z is not None, problems)
                elif event.state in (Captioning.PAUSED, Captioning.ON):
                    self.term.line(f"{self.name}: paused: nothing is captured (Ctrl-Z to resume, "
                                   "Ctrl-C to stop)" if event.state == Captioning.PAUSED
                                   else f"{self.name}: resumed")
                elif event.state == Captioning.OFF:
                    self.result.session_id = event.session_id or self.ctl.session_id
                    break
                continue
            if isinstance(event, AppProblem) and not started:
                problems.append(event)  # the error below if nothing starts, else shown then
                continue
            self._show(event)
        self.result.wall_s = time.perf_counter() - t0
        if not started and problems:
            raise VoxcapError(problems[0].message, problems[0].fix)  # nothing ran: one line + fix
        self.term.release()
        self.term.end_line()
        if self.result.failure is None:
            self.term.line(f"{self.name}: done")

    def _stop_on_signal(self) -> bool:
        """Whether SIGTERM or SIGHUP came: then stop, as Ctrl-C does."""
        name = self.quit.received
        if not name:
            return False
        log.info("%s received: stopping", name)
        self.term.line(f"{self.name}: {name} received ({name} again to leave at once): flushing")
        self.ctl.stop_captioning()
        return True

    def _stop_at(self, deadline: float | None, duration: float | None) -> bool:
        """Whether --duration is over: then stop."""
        if deadline is None or time.monotonic() < deadline:
            return False
        self.term.line(f"{self.name}: {duration:g} s done: flushing")
        self.ctl.stop_captioning()
        return True

    def _say_started(self, duration: float | None, pausable: bool, problems: list) -> None:
        self.term.line(f"{self.name}: captioning" + (f" for {duration:g} s" if duration else "")
                       + " (Ctrl-C to stop)")
        if pausable:
            self.term.line(f"{self.name}: Ctrl-Z pauses, and resumes, the session")
        for p in problems:
            self._show(p)

    def _pause_on_ctrl_z(self, ctrl_z: _SignalCounted | None, running: bool) -> None:
        if ctrl_z is not None and ctrl_z.count > self._pauses_seen:
            self._pauses_seen += 1
            if running:
                self.ctl.toggle_pause()

    def _show(self, event) -> None:
        r, say = self.result, self.term.line
        if isinstance(event, TextDelta):
            if event.stream_id in r.labels:
                r.deltas.append(event)
                self.term.text(event.stream_id, event.text)
                at = self.ctl.clock.wall_time(event.stream_id, event.audio_end_s)
                if at is not None and event.text:
                    r.lag.add(time.time() - at)
        elif isinstance(event, LineTranslated):
            r.lines.append(event)
            if event.translation and not event.refined:  # live: each line's own, once
                self.term.line(f"  [{event.language}→{event.target}] {event.translation}",
                               caption=True)
        elif isinstance(event, StreamOpened):
            r.labels[event.stream_id] = event.label
            self.term.labels[event.stream_id] = event.label
        elif isinstance(event, StreamFinished) and event.reason == "error" \
                and event.stream_id in r.labels:
            r.failure = event.message
        elif isinstance(event, EngineFailed):
            r.failure = f"{event.message}\n  fix: {event.fix}" if event.fix else event.message
        notice = notice_for(event, r.labels)
        if notice is not None and (self.show_capture or notice.topic != "capture"):
            say(notice.line())

    def _drain(self) -> None:
        """Events published while shutting down (the captures' last words, stop totals)."""
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if not isinstance(event, CaptioningState):
                self._show(event)

    def finish(self, labelled: bool) -> int:
        """The closing lines (session, transcript, measurements); the exit code. Stopped by
        SIGTERM or SIGHUP (a logout: everything it ran waits to be gone), the process ends here
        (``leave_at_once``: torch's and vLLM's teardown at the interpreter's exit took 2 s)."""
        code = self._closing_lines(labelled)
        if self.quit.received:
            log.info("%s: closed after %s: leaving", self.name, self.quit.received)
            leave_at_once(code)
        return code

    def _closing_lines(self, labelled: bool) -> int:
        r, say = self.result, self.term.line
        self.term.release()  # words shown while shutting down
        if r.session_id:
            say(f"session: {r.session_id} (voxcap export {r.session_id} -o FILE)")
        if self.out_path is not None:  # written even after a failure: text shown is kept
            export(r.deltas, self.out_path, labels=r.labels if labelled else None,
                   lines=r.lines, **self.out_options)
            say(f"transcript: {self.out_path}")
        if r.dropped_s > 0:
            say(f"{self.name}: {r.dropped_s:.1f} s of audio could not be captioned (see above)")
        if r.failure:
            self.term.error(r.failure)
            return 1
        return 0

    def lag_line(self) -> str:
        p50, p95 = self.result.lag.percentiles(last_s=None)
        if p50 is None:
            return "caption lag n/a"
        return f"caption lag p50 {p50:.2f} s p95 {p95:.2f} s"
