"""What ``voxcap prepare --model`` (run by the app while the weights download) saves the first
start, measured in one run: a cold start with empty caches against a start after the
preparation, each in a fresh process with its own cache folders (startup_profile.py).

usage:
  python -m benchmarks.prepare_effect --model DIR [--dummy-weights] [--out prepare.json]
The preparation runs with the app's default settings (an empty settings folder), as on a first
run; the starts use the same settings (2 streams, FULL_DECODE_ONLY, 8192 tokens). Prints seconds
to ready for: cold; the preparation itself; the start after it; and the ratio cold / after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .lib.processes import ROOT, module_command


def startup(model: str, dummy: bool, run: str, cache_root: Path, out: Path) -> float:
    cmd = module_command("benchmarks.startup_profile", "--model", model, "--runs", run,
                         "--cache-root", str(cache_root), "--out", str(out),
                         *(["--dummy-weights"] if dummy else []))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=1800, cwd=ROOT)
    (res,) = json.loads(out.read_text())["runs"]
    if res.get("ready_s") is None:
        raise SystemExit(f"{run} start failed: {res}")
    return float(res["ready_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="voxcap-prepare-effect-") as tmp:
        tmp = Path(tmp)
        cold = startup(a.model, a.dummy_weights, "cold", tmp / "cold", tmp / "cold.json")
        prepared = tmp / "prepared"  # the caches a user's machine keeps (startup_profile's layout)
        env = dict(os.environ, VLLM_CACHE_ROOT=str(prepared / "vllm"),
                   TORCHINDUCTOR_CACHE_DIR=str(prepared / "inductor"),
                   TRITON_CACHE_DIR=str(prepared / "triton"),
                   VOXCAP_CONFIG_DIR=str(tmp / "config"))  # no settings file: the app's defaults
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sys; from voxcap.cli import main; "
                        "sys.exit(main(sys.argv[1:]))", "prepare", "--model", a.model],
                       env=env, check=True, timeout=1800)
        prepare_s = time.perf_counter() - t
        after = startup(a.model, a.dummy_weights, "warm", prepared, tmp / "after.json")
    res = {"cold_ready_s": round(cold, 1), "prepare_s": round(prepare_s, 1),
           "after_prepare_ready_s": round(after, 1), "cold_over_after": round(cold / after, 2)}
    print(f"cold start (empty caches)        {cold:7.1f} s to ready")
    print(f"voxcap prepare --model (process) {prepare_s:7.1f} s (during the download)")
    print(f"first start after it             {after:7.1f} s to ready   ({cold / after:.2f}x faster)")
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
