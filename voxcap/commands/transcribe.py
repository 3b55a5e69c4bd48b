"""``voxcap transcribe``: an audio file through the engine, text printed as it arrives."""

from __future__ import annotations

import sys
import threading
import time

from ..audio_file import TARGET_RATE, iter_blocks, probe
from ..captions.export import check_export_path, export
from ..captions.journal import Journal, engine_session_settings
from ..engine.base import CaptionEngine
from ..errors import EngineError
from ..events import (
    EngineFailed,
    EngineProgress,
    EngineReady,
    StreamFinished,
    StreamGap,
    StreamInterrupted,
    StreamResumed,
    TextDelta,
)
from .options import add_engine_options, engine_settings, make_engine
from .sessions import add_export_options, export_kwargs

STREAM_NOTICES = (StreamGap, StreamInterrupted, StreamResumed)  # remote engine: never silent


def start_engine(engine: CaptionEngine, say) -> CaptionEngine:
    """Start an engine (from ``make_engine``), reporting its stages through ``say``; raise
    EngineError on failure."""
    engine.start()
    while True:
        event = engine.events.get()
        if isinstance(event, EngineProgress):
            say(f"engine: {event.stage}" + (f" ({event.elapsed_s:.0f} s)" if event.elapsed_s >= 1 else ""))
        elif isinstance(event, EngineReady):
            say(f"engine: ready in {event.start_seconds:.1f} s on {event.device}; graph mode "
                f"{event.resolved_graph_mode} (requested {event.requested_graph_mode})")
            for note in event.notes:
                say(f"engine: note: {note}")
            engine.wait_ready(timeout=5)  # returns at once; lets a rollover layer see the cap
            return engine
        elif isinstance(event, EngineFailed):
            engine.shutdown()
            raise EngineError(event.message, event.fix)


def _feed(engine: CaptionEngine, stream_id: str, path, realtime: bool, stop: threading.Event,
          errors: list) -> None:
    try:
        t0 = time.perf_counter()
        sent = 0
        for block in iter_blocks(path, 0.08 if realtime else 0.5):
            if stop.is_set():
                break
            if realtime:  # a live source delivers audio no faster than it is played
                delay = t0 + sent / TARGET_RATE - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            engine.push_audio(stream_id, block)
            sent += block.size
    except Exception as exc:  # reported by the main thread, which still flushes the stream
        errors.append(exc)
    finally:
        engine.close_stream(stream_id)


def _journal_warning(status) -> None:
    print(f"warning: {status.message}" + (f"\n  fix: {status.fix}" if status.fix else ""),
          file=sys.stderr, flush=True)


def add_parser(sub) -> list[str]:
    t = sub.add_parser("transcribe", help="transcribe an audio file through the engine",
                       description="Stream an audio file (WAV/FLAC/OGG/MP3, any rate and channels) "
                                   "through the engine and print text as it arrives.")
    t.add_argument("audio", metavar="AUDIO")
    t.add_argument("--realtime", action="store_true",
                   help="feed audio at wall-clock speed like a live source (default: as fast as possible)")
    t.add_argument("-o", "--output", metavar="OUT",
                   help="write the transcript (.srt, .vtt, .txt or .jsonl)")
    t.add_argument("--no-journal", action="store_true",
                   help="do not keep this run as a session (see `voxcap sessions`)")
    add_export_options(t)
    t.add_argument("--quiet", "-q", action="store_true", help="do not print text or progress")
    add_engine_options(t)
    return ["transcribe"]


def run(args) -> int:
    settings = engine_settings(args, max_buffer_s=None)  # a file: hold all of it for a server
    quiet = args.quiet

    def say(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    info = probe(args.audio)  # fail before the engine's long start
    out_path = check_export_path(args.output) if args.output else None
    out_options = export_kwargs(args)
    say(f"audio: {info.path.name}, {info.seconds:.1f} s, {info.rate} Hz, {info.channels} ch")
    engine = start_engine(make_engine(args, settings=settings), say)
    journal = None if args.no_journal else Journal.create(
        engine_session_settings(settings, engine.ready_info, {"file": str(info.path)}),
        kind="transcribe", title=info.path.name, on_status=_journal_warning)
    deltas: list[TextDelta] = []
    failure: str | None = None
    stop = threading.Event()
    feed_errors: list = []
    try:
        sid = engine.open_stream()
        if journal is not None:
            journal.stream_opened(sid, source=str(info.path))
        t0 = time.perf_counter()
        feeder = threading.Thread(target=_feed, name="voxcap-feed", daemon=True,
                                  args=(engine, sid, info.path, args.realtime, stop, feed_errors))
        feeder.start()
        interrupted = False
        while True:
            try:
                event = engine.events.get()
            except KeyboardInterrupt:  # first Ctrl-C: stop feeding and flush; second: abort
                if interrupted:
                    engine.abort_stream(sid)
                else:
                    interrupted = True
                    stop.set()
                    say("\ninterrupted: flushing (Ctrl-C again to abort)")
                continue
            if journal is not None:
                journal.on_event(event)
            if isinstance(event, TextDelta) and event.stream_id == sid:
                deltas.append(event)
                if event.text and not quiet:
                    sys.stdout.write(event.text)
                    sys.stdout.flush()
            elif isinstance(event, StreamFinished) and event.stream_id == sid:
                if event.reason == "error":
                    failure = event.message
                elif event.reason == "max_length":
                    say(f"\nnote: the session reached its max length "
                        f"({engine.ready_info.max_model_len} tokens); raise --max-model-len to "
                        "transcribe longer files")
                break
            elif isinstance(event, STREAM_NOTICES) and event.stream_id == sid:
                say(f"\nengine: {event.message}")
            elif isinstance(event, EngineFailed):
                failure = f"{event.message}\n  fix: {event.fix}" if event.fix else event.message
                break
        wall = time.perf_counter() - t0
        feeder.join(timeout=5)
        if not quiet and any(d.text for d in deltas):
            sys.stdout.write("\n")
        snap = engine.stats.snapshot()
        tokens = len(deltas)
        p50 = f"{snap.step_p50_ms:.1f}" if snap.step_p50_ms else "n/a"
        p95 = f"{snap.step_p95_ms:.1f}" if snap.step_p95_ms else "n/a"
        say(f"done: {info.seconds:.1f} s of audio in {wall:.1f} s ({info.seconds / wall:.1f}x real "
            f"time), {tokens} tokens, step p50 {p50} ms p95 {p95} ms")
        if feed_errors:
            failure = failure or str(feed_errors[0])
    finally:
        stop.set()
        if journal is not None:
            journal.close()
            say(f"session: {journal.session_id} (voxcap export {journal.session_id} -o FILE)")
        if out_path is not None:  # written even after a failure: text already produced is kept
            export(deltas, out_path, **out_options)
            say(f"transcript: {out_path}")
        engine.shutdown()
    if failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    return 0
