"""``voxcap transcribe``: an audio file through the engine, text printed as it arrives.

A front end on the session controller (``commands.terminal_frontend``), with the file as its one
source (``app.sources.FileAudio``): read as fast as the engine takes it, or at wall-clock speed
with ``--realtime``. Ctrl-C stops reading and flushes; a second one gives up on the flush.
Read as fast as the engine takes it, a file waits on nobody: this computer's engine then uses
the most accurate delay the model was trained on (2400 ms) unless ``--delay-ms`` says otherwise.
"""

from __future__ import annotations

from ..app.sources import FileAudio
from ..engine.delays import LONGEST_TRAINED_MS
from ..framing import DEFAULT_DELAY_MS
from .options import engine_settings, settings_from_flags
from .terminal_frontend import CaptionRun, add_run_options

FILE_DELAY_HELP = (f"; here without --realtime: {LONGEST_TRAINED_MS}, the most accurate (a file "
                   "waits on nobody)")


def add_parser(sub) -> list[str]:
    t = sub.add_parser("transcribe", help="transcribe an audio file through the engine",
                       description="Stream an audio file (WAV/FLAC/OGG/MP3, any rate and channels) "
                                   "through the engine and print text as it arrives. Without "
                                   "--realtime the file is read as fast as the engine takes it "
                                   "and this computer's engine uses the most accurate delay, "
                                   f"{LONGEST_TRAINED_MS} ms, unless --delay-ms is given.")
    t.add_argument("audio", metavar="AUDIO")
    t.add_argument("--realtime", action="store_true",
                   help="feed audio at wall-clock speed like a live source (default: as fast as "
                        f"possible), at the live delay (default {DEFAULT_DELAY_MS} ms)")
    add_run_options(t, engine_help={"delay_ms": FILE_DELAY_HELP})
    return ["transcribe"]


def use_file_delay(args) -> None:
    """A file read as fast as the engine takes it waits on nobody: the most accurate delay,
    unless --delay-ms was given. Not with --realtime (paced like a live source), nor for a
    server (its delay is its own: the client only assumes one)."""
    if args.delay_ms is None and not args.realtime and not settings_from_flags(args).engine.remote:
        args.delay_ms = LONGEST_TRAINED_MS


def run(args) -> int:
    use_file_delay(args)
    settings = engine_settings(args, max_buffer_s=None)  # a file: hold all of it for a server
    audio = FileAudio(args.audio, realtime=args.realtime)  # fail before the engine's long start
    info = audio.info
    cap = CaptionRun(args, settings, audio, name="transcribe", show_capture=False)
    term = cap.term
    term.line(f"audio: {info.path.name}, {info.seconds:.1f} s, {info.rate} Hz, {info.channels} ch")
    result = cap.run()
    snap, wall = result.stats, max(result.wall_s, 1e-6)
    p50 = f"{snap.step_p50_ms:.1f}" if snap and snap.step_p50_ms else "n/a"
    p95 = f"{snap.step_p95_ms:.1f}" if snap and snap.step_p95_ms else "n/a"
    seconds = max((d.audio_end_s for d in result.deltas), default=0.0)
    term.line(f"done: {seconds:.1f} s of audio in {wall:.1f} s ({seconds / wall:.1f}x real "
              f"time), {len(result.deltas)} tokens, step p50 {p50} ms p95 {p95} ms"
              + (f", {cap.lag_line()}" if args.realtime else ""))
    return cap.finish(labelled=False)
