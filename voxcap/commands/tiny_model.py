"""``voxcap make-tiny-model DIR``: a tiny test model for self-checks (``engine.model.tiny``)."""

from __future__ import annotations

from ..engine.model.tiny import write_tiny_model


def add_parser(sub) -> list[str]:
    m = sub.add_parser("make-tiny-model",
                       help="write a tiny test model (with --weights, or use it with --dummy-weights)",
                       description="Write params.json and tekken.json of a tiny Voxtral Realtime "
                                   "model: checks an install end to end without the 9 GB download.")
    m.add_argument("directory", metavar="DIR")
    m.add_argument("--weights", action="store_true",
                   help="also write random weights as consolidated.safetensors in the real "
                        "model's layout (loads without --dummy-weights; tokens depend on the audio)")
    m.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    return ["make-tiny-model"]


def run(args) -> int:
    seed = args.seed if args.weights else None
    print(f"tiny model written to {write_tiny_model(args.directory, weights_seed=seed)}")
    return 0
