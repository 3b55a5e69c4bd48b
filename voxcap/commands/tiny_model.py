"""``voxcap make-tiny-model DIR``: a tiny test model for self-checks (``engine.model.tiny``), and
what to do with it next."""

from __future__ import annotations

import shlex

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
    folder = write_tiny_model(args.directory, weights_seed=seed)
    print(f"tiny model written to {folder}")
    print(next_steps(str(folder), weights=args.weights))
    return 0


def next_steps(folder: str, weights: bool) -> str:
    """What a person does with the folder: the commands, runnable as printed."""
    model = f"--model {shlex.quote(folder)}"
    dummy = "" if weights else " --dummy-weights"
    return "\n".join((
        "Random weights: the text is gibberish, the mechanics are real (needs vLLM; its CPU build "
        "will do). Next, one of:",
        f"  voxcap transcribe FILE.wav {model}{dummy}    # captions a sound file",
        f"  voxcap gui {model}{dummy} --eager    # the app, captioning with it",
        f"  voxcap serve {model}{dummy} --eager    # a vLLM server, for the app's "
        "\"Use a vLLM server\"",
    ))
