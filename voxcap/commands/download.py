"""``voxcap download [--dir DIR]``: the model from the Hugging Face Hub, resumable, with progress.

The same download as the app's first-run dialog (``voxcap.app.download``: only the three files
the engine needs, verified, continued where it stopped), for a terminal or a GPU box without a
desktop; it needs no ``hf`` command on PATH.
"""

from __future__ import annotations

import sys
import time


def add_parser(sub) -> list[str]:
    from ..app.download import MODEL_REPO, default_model_dir

    p = sub.add_parser("download", help=f"download the model ({MODEL_REPO}, about 9 GB)",
                       description=f"Download {MODEL_REPO} (params.json, tekken.json, "
                                   "consolidated.safetensors: about 9 GB) into DIR; run it again "
                                   "to resume a broken download. $HF_TOKEN or `hf auth login`'s "
                                   "token is used if the Hub asks for one; $HF_ENDPOINT for a mirror.")
    p.add_argument("--dir", metavar="DIR", default=str(default_model_dir()),
                   help=f"where to put it (default {default_model_dir()}, where the app looks)")
    return ["download"]


def run(args) -> int:
    from ..app.download import MODEL_REPO, ModelDownload

    last = [0.0]

    def progress(p) -> None:
        now = time.monotonic()
        if p.stage == "downloading" and now - last[0] < 1.0 and p.done_bytes < p.total_bytes:
            return
        last[0] = now
        if p.total_bytes:
            rate = f", {p.bytes_per_s / 1e6:.0f} MB/s" if p.bytes_per_s else ""
            print(f"\r{p.stage}: {p.done_bytes / 1e9:.2f} of {p.total_bytes / 1e9:.2f} GB "
                  f"({p.fraction:.0%}{rate})   ", end="", file=sys.stderr, flush=True)

    download = ModelDownload(MODEL_REPO, args.dir, on_progress=progress)
    try:
        folder = download.run()
    except KeyboardInterrupt:
        print("\ninterrupted: run the same command again to resume", file=sys.stderr)
        return 130
    print(file=sys.stderr)
    print(f"The model is in {folder}: `voxcap gui` finds it there; or --model {folder}")
    return 0
