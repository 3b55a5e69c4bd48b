"""``voxcap sessions`` (list previous sessions) and ``voxcap export SESSION -o FILE``.

``add_export_options(parser)`` / ``export_kwargs(args)`` are shared with every command
that writes transcripts (``transcribe``, ``live``): ``--timestamps`` for .txt and the
profanity-masking options.
"""

from __future__ import annotations

import sys

from ..captions.export import FORMATS, check_export_path, export
from ..captions.masking import make_masker
from ..captions.sessions import SessionStore, describe

_MAX_WARNINGS_SHOWN = 5


def add_export_options(p) -> None:
    g = p.add_argument_group("transcript files")
    g.add_argument("--timestamps", action="store_true",
                   help="in .txt files, start each paragraph with its [HH:MM:SS] time")
    g.add_argument("--mask-profanity", action="store_true",
                   help="mask swear words in the captions printed and shared and in the files "
                        "written (never in the journal)")
    g.add_argument("--mask-words", metavar="FILE",
                   help="word list for --mask-profanity, one per line; 'word*' matches prefixes")
    g.add_argument("--translation", choices=("original", "translation", "both", "separate"),
                   default="original",
                   help="translated captions (--translate-to) in the file: the original words "
                        "(default), the translation alone, both in each cue, or a separate file "
                        "per language (NAME.srt and NAME.en.srt)")
    g.add_argument("--language-tags", action="store_true",
                   help="start each line of .srt and .txt files with its language ([fr]); "
                        ".vtt files always mark it (<lang fr>)")


def export_kwargs(args) -> dict:
    """``export()`` keyword arguments from the options above (ConfigError if bad)."""
    masker = make_masker(args.mask_profanity or bool(args.mask_words), args.mask_words)
    return {"timestamps": args.timestamps, "masker": masker, "translation": args.translation,
            "language_tags": args.language_tags}


def add_parser(sub) -> list[str]:
    s = sub.add_parser("sessions", help="list previous sessions (newest first)",
                       description="List the sessions kept in the data directory, newest first: "
                                   "id, start, kind, length, journal size, sources.")
    s.add_argument("--limit", type=int, default=20, metavar="N", help="show N (default 20; 0: all)")
    e = sub.add_parser("export", help="export a session as SRT, WebVTT, TXT or JSONL",
                       description="Write a previous session's transcript; the format comes "
                                   f"from the file name ({', '.join(FORMATS)}).")
    e.add_argument("session", metavar="SESSION",
                   help="session id (or a unique start of it), 'last', or a session folder")
    e.add_argument("-o", "--output", metavar="FILE", action="append", required=True,
                   help="file to write (repeat for several formats)")
    add_export_options(e)
    return ["sessions", "export"]


def run(args) -> int:
    store = SessionStore()
    if args.command == "sessions":
        infos = store.list()
        if not infos:
            print(f"no sessions in {store.root}", file=sys.stderr)
            return 0
        shown = infos if args.limit <= 0 else infos[:args.limit]
        for info in shown:
            print(describe(info))
        if len(shown) < len(infos):
            print(f"({len(infos) - len(shown)} older; --limit 0 shows all)", file=sys.stderr)
        return 0
    outputs = [check_export_path(o) for o in args.output]  # fail before reading
    kwargs = export_kwargs(args)
    session = store.open(args.session)
    for w in session.warnings[:_MAX_WARNINGS_SHOWN]:
        print(f"warning: {w}", file=sys.stderr)
    if len(session.warnings) > _MAX_WARNINGS_SHOWN:
        print(f"warning: ... and {len(session.warnings) - _MAX_WARNINGS_SHOWN} more",
              file=sys.stderr)
    for out in outputs:
        result = export(session, out, **kwargs)
        note = "" if result.words else " (the session has no text)"
        print(f"{result.path}: {result.items} {_unit(result.fmt)}, {result.words} words{note}",
              file=sys.stderr)
    return 0


def _unit(fmt: str) -> str:
    return {".srt": "cues", ".vtt": "cues", ".txt": "paragraphs"}.get(fmt, "records")
