"""``voxcap transcribe``: an audio file through the engine, text printed as it arrives.

A front end on the session controller (``commands.terminal_frontend``), with the file as its one
source (``app.sources.FileAudio``): read as fast as the engine takes it, or at wall-clock speed
with ``--realtime``. Ctrl-C stops reading and flushes; a second one gives up on the flush.
"""

from __future__ import annotations

from ..app.sources import FileAudio
from .options import engine_settings
from .terminal_frontend import CaptionRun, add_run_options


def add_parser(sub) -> list[str]:
    t = sub.add_parser("transcribe", help="transcribe an audio file through the engine",
                       description="Stream an audio file (WAV/FLAC/OGG/MP3, any rate and channels) "
                                   "through the engine and print text as it arrives.")
    t.add_argument("audio", metavar="AUDIO")
    t.add_argument("--realtime", action="store_true",
                   help="feed audio at wall-clock speed like a live source (default: as fast as possible)")
    add_run_options(t)
    return ["transcribe"]


def run(args) -> int:
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
