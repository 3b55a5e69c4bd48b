"""``voxcap make-tiny-model DIR``: a tiny test model for self-checks (``engine.tiny_model``)."""

from __future__ import annotations

from ..engine.tiny_model import write_tiny_model


def add_parser(sub) -> list[str]:
    m = sub.add_parser("make-tiny-model", help="write a tiny test model (use with --dummy-weights)",
                       description="Write params.json and tekken.json of a tiny Voxtral Realtime "
                                   "model: checks an install end to end without the 9 GB download.")
    m.add_argument("directory", metavar="DIR")
    return ["make-tiny-model"]


def run(args) -> int:
    print(f"tiny model written to {write_tiny_model(args.directory)}")
    return 0
