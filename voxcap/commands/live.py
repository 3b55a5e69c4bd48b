"""``voxcap live``: headless live captions from system audio and/or the microphone.

A front end on the session controller (``commands.captioning``): captions go to stdout as
they arrive, capture events (device lost/back, interruptions, losses) to stderr as one line
each. With ``both``, system audio and the microphone are two engine streams, "Them" and "You".
Ctrl-C (or ``--duration``) stops capturing, lets the engine flush the words it still holds,
and exits; a second Ctrl-C gives up on them.
"""

from __future__ import annotations

from ..app.sources import AudioSources
from ..captions.export import check_export_path
from ..capture.sources import SOURCE_HELP
from ..errors import ConfigError
from .captioning import CaptionRun, Terminal
from .options import add_engine_options, engine_settings
from .sessions import add_export_options, export_kwargs


def add_parser(sub) -> list[str]:
    p = sub.add_parser("live", help="caption system audio and/or the microphone live",
                       description="Capture system audio, the microphone, both, or a named device "
                                   "and print captions as they arrive (capture events on stderr). "
                                   "Ctrl-C flushes and exits.")
    p.add_argument("--source", default="system", metavar="SOURCE",
                   help=f"{SOURCE_HELP} (default: system)")
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


def run(args) -> int:
    audio = AudioSources()
    if args.duration is not None and args.duration <= 0:
        raise ConfigError(f"--duration must be positive, not {args.duration:g}",
                          "give the seconds to capture, or leave it out to run until Ctrl-C")
    resolved = audio.resolve(args.source)  # before the engine's long start: no sound server...
    settings = engine_settings(args, max_streams=len(resolved))
    out_path = check_export_path(args.output) if args.output else None
    out_options = export_kwargs(args)
    term = Terminal(args.quiet)
    for spec, description in resolved:
        term.line(f"source: {spec.label}: {description!r}")
    cap = CaptionRun(args, settings, audio, term, name="live")
    result = cap.run(args.source, args.duration)
    if result.deltas:
        term.line(f"live: {cap.lag_line()}")
    return cap.finish(out_path, out_options, labelled=True)
