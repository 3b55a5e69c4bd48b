"""``voxcap live``: headless live captions from system audio and/or the microphone.

Capture (``voxcap.capture``) feeds the engine; captions go to stdout as they arrive, capture
events (device lost/back, interruptions, losses) to stderr as one line each. With ``both``,
system audio and the microphone are two engine streams, "Them" and "You". Ctrl-C (or
``--duration``) stops capturing, lets the engine flush the words it still holds, and exits;
a second Ctrl-C aborts without flushing.
"""

from __future__ import annotations

import queue
import sys
import time

from .captions.export import check_export_path, export
from .captions.journal import Journal, engine_session_settings
from .capture.capture import Capture
from .capture.devices import server_state
from .capture.sources import SOURCE_HELP, parse_sources, resolve_initial
from .cli_options import add_engine_options, engine_settings, make_engine
from .errors import ConfigError
from .events import (
    CaptureDeviceChanged,
    CaptureInterrupted,
    CaptureLoss,
    CaptureRecovered,
    CaptureStarted,
    CaptureStopped,
    EngineFailed,
    StreamFinished,
    TextDelta,
)
from .sessions_cli import add_export_options, export_kwargs
from .transcribe import STREAM_NOTICES, start_engine

CAPTURE_EVENTS = (CaptureStarted, CaptureInterrupted, CaptureRecovered, CaptureDeviceChanged,
                  CaptureLoss, CaptureStopped)
FLUSH_TIMEOUT_S = 120.0


def add_parser(sub) -> list[str]:
    p = sub.add_parser("live", help="caption system audio and/or the microphone live",
                       description="Capture system audio, the microphone, both, or a named device "
                                   "and print captions as they arrive (capture events on stderr). "
                                   "Ctrl-C flushes and exits.")
    p.add_argument("--source", default="system", metavar="SOURCE",
                   help=f"{SOURCE_HELP} (default: system)")
    p.add_argument("--echo-cancel", choices=("auto", "on", "off"), default="auto",
                   help="with both: capture the microphone through the sound server's echo "
                        "canceller, so it does not repeat what the speakers play (default: auto, "
                        "on unless the output is headphones)")
    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the transcript at the end (.srt, .vtt, .txt or .jsonl)")
    p.add_argument("--no-journal", action="store_true",
                   help="do not keep this run as a session (see `voxcap sessions`)")
    add_export_options(p)
    p.add_argument("--quiet", "-q", action="store_true", help="print neither captions nor events")
    add_engine_options(p)
    return ["live"]


class _Printer:
    """Captions on stdout as they arrive; with several streams, a new line with the label
    whenever the speaker changes."""

    def __init__(self, labels: dict[str, str], quiet: bool) -> None:
        self.labels, self.quiet = labels, quiet
        self.current: str | None = None
        self.mid_line = False

    def text(self, stream_id: str, text: str) -> None:
        if self.quiet or not text:
            return
        if len(self.labels) > 1 and stream_id != self.current:
            sys.stdout.write(("\n" if self.mid_line else "") + f"[{self.labels[stream_id]}] ")
            text = text.lstrip()
        self.current = stream_id
        sys.stdout.write(text)
        sys.stdout.flush()
        self.mid_line = True

    def line(self, msg: str) -> None:
        """A line on stderr, after ending a caption line in progress."""
        if self.quiet:
            return
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False
            self.current = None
        print(msg, file=sys.stderr, flush=True)


def run(args) -> int:
    specs = parse_sources(args.source, echo=args.echo_cancel)
    if args.duration is not None and args.duration <= 0:
        raise ConfigError(f"--duration must be positive, not {args.duration:g}",
                          "give the seconds to capture, or leave it out to run until Ctrl-C")
    settings = engine_settings(args, max_streams=len(specs))
    out_path = check_export_path(args.output) if args.output else None
    out_options = export_kwargs(args)
    printer = _Printer({}, args.quiet)
    say = printer.line
    # Fail before the engine's long start: no sound server, unknown device.
    state = server_state()
    resolved = [resolve_initial(spec, state) for spec in specs]
    for spec, dev in resolved:
        say(f"source: {spec.label}: {dev.description!r}")

    engine = start_engine(make_engine(args, settings=settings), say)
    sources = {spec.label: dev.description for spec, dev in resolved}
    journal = None if args.no_journal else Journal.create(
        engine_session_settings(settings, engine.ready_info, sources), kind="live",
        title=" + ".join(sources), on_status=lambda st: say(f"warning: {st.message}"))
    captures: list[Capture] = []
    deltas: list[TextDelta] = []
    labels: dict[str, str] = {}
    finished: set[str] = set()
    failure: str | None = None
    try:
        for spec, dev in resolved:
            sid = engine.open_stream(spec.label)
            labels[sid] = spec.label
            if journal is not None:
                journal.stream_opened(sid, label=spec.label, source=dev.description)
            cap = Capture(spec, lambda block, sid=sid: engine.push_audio(sid, block.samples),
                          engine.events.put)
            captures.append(cap)
            cap.start(server_state())
        printer.labels = labels
        say("live: captioning" + (f" for {args.duration:g} s" if args.duration else "")
            + " (Ctrl-C to stop)")
        failure = _loop(engine, captures, labels, finished, deltas, journal, printer, args.duration)
    finally:
        for cap in captures:
            cap.stop()
        _drain_capture_events(engine, printer)
        if journal is not None:
            journal.close()
            say(f"session: {journal.session_id} (voxcap export {journal.session_id} -o FILE)")
        if out_path is not None:  # written even after a failure: text already shown is kept
            export(deltas, out_path, labels=labels, **out_options)
            say(f"transcript: {out_path}")
        engine.shutdown()
    if failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    return 0


def _loop(engine, captures, labels, finished, deltas, journal, printer, duration) -> str | None:
    """Events until every stream finished; returns a failure message or None."""
    deadline = time.monotonic() + duration if duration else None
    stopping_since: float | None = None
    aborted = False

    def stop_and_flush(reason: str) -> None:
        nonlocal stopping_since
        stopping_since = time.monotonic()
        printer.line(f"live: {reason}: flushing")
        for cap in captures:
            cap.stop()  # the last captured audio is pushed before the stream closes
        for sid in labels:
            engine.close_stream(sid)

    while len(finished) < len(labels):
        try:
            if stopping_since is None and deadline is not None and time.monotonic() >= deadline:
                stop_and_flush(f"{duration:g} s done")
            if stopping_since is not None and time.monotonic() - stopping_since > FLUSH_TIMEOUT_S:
                return f"the engine did not finish flushing in {FLUSH_TIMEOUT_S:.0f} s"
            try:
                event = engine.events.get(timeout=0.2)
            except queue.Empty:
                continue
        except KeyboardInterrupt:  # first Ctrl-C: stop and flush; second: abort
            if stopping_since is None:
                stop_and_flush("interrupted (Ctrl-C again to abort)")
            elif not aborted:
                aborted = True
                for sid in labels:
                    engine.abort_stream(sid)
            continue
        if journal is not None:
            journal.on_event(event)
        if isinstance(event, TextDelta) and event.stream_id in labels:
            deltas.append(event)
            printer.text(event.stream_id, event.text)
        elif isinstance(event, CAPTURE_EVENTS):
            printer.line(f"capture: {event.message}")
        elif isinstance(event, StreamFinished) and event.stream_id in labels:
            finished.add(event.stream_id)
            if event.reason == "error":
                return event.message
            if event.reason == "max_length" and stopping_since is None:
                printer.line(f"live: {labels[event.stream_id]}: the session reached its max length; "
                             "raise --max-model-len for longer sessions")
                stop_and_flush("max length")
        elif isinstance(event, STREAM_NOTICES) and event.stream_id in labels:
            printer.line(f"engine: {labels[event.stream_id]}: {event.message}")
        elif isinstance(event, EngineFailed):
            return f"{event.message}\n  fix: {event.fix}" if event.fix else event.message
    printer.line("live: done")
    return None


def _drain_capture_events(engine, printer) -> None:
    while True:
        try:
            event = engine.events.get_nowait()
        except queue.Empty:
            return
        if isinstance(event, CAPTURE_EVENTS):
            printer.line(f"capture: {event.message}")
