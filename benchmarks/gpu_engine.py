"""voxcap's engine on an NVIDIA GPU: start-up by stage, GPU memory against voxcap's estimate,
throughput and step latency per CUDA graph mode.

For each graph mode: one engine sized for 4 streams (as upstream's PR #51167 measured), runs
of 1 and 4 streams inside it. For FULL_DECODE_ONLY (the default) also engines sized for 1 and
2 streams, for memory at each size. Every engine lives in its own child process (a fresh CUDA
context), started with voxcap's defaults otherwise. Memory is NVML's device "used" after the
engine is ready minus before it started: both voxcap's processes (the app's CUDA context and
vLLM's engine core), as a user's `nvidia-smi` shows them.

    python -m benchmarks.gpu_engine --model DIR [--dummy-weights] [--seconds 10] \
        [--modes NONE,PIECEWISE,FULL_DECODE_ONLY,FULL_AND_PIECEWISE] [--out results.json]

Use the real model, or its shape with --dummy-weights (../shared/gpu/make_real_shape_model.py).
Prints a table and writes JSON (with versions and date). See docs/gpu-results.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata as md
import json
import platform
import sys
from pathlib import Path

from voxcap.commands.bench import bench_in_child
from voxcap.engine.settings import GRAPH_MODES, InProcessSettings
from voxcap.gpu import describe_gpus

GIB = 2**30


def plan(modes: list[str]) -> list[tuple[str, int, list[int]]]:
    """(mode, engine size in streams, stream counts run inside it)."""
    runs = [(m, 4, [1, 4]) for m in modes]
    if "FULL_DECODE_ONLY" in modes:
        runs += [("FULL_DECODE_ONLY", 1, [1]), ("FULL_DECODE_ONLY", 2, [2])]
    return runs


def speedups(results: list[dict]) -> None:
    for r in results:
        base = next((b for b in results if b.get("mode") == "PIECEWISE" and "error" not in b
                     and b["streams"] == r["streams"] and b.get("max_streams") == r.get("max_streams")),
                    None)
        ok = base and "error" not in r and base.get("tokens_per_s")
        r["speedup_vs_piecewise"] = round(r["tokens_per_s"] / base["tokens_per_s"], 3) if ok else None


def tables(results: list[dict]) -> str:
    def f(v, spec="", scale=1.0):
        return format(v / scale, spec) if isinstance(v, (int, float)) else "n/a"

    out = ["Throughput and step latency (engine sized for max streams; step = prompt handed to vLLM"
           " -> its token back)",
           f"{'mode':<19}{'resolved':<19}{'max':>4}{'streams':>8}{'tok/s':>9}{'p50 ms':>8}{'p95 ms':>8}"
           f"{'full%':>7}{'vs PW':>7}"]
    for r in results:
        if "error" in r:
            out.append(f"{r['mode']:<19}failed: {r['error']}")
            continue
        share = r["full_graph_share"] * 100 if r.get("full_graph_share") is not None else None
        out.append(f"{r['mode']:<19}{r['resolved_mode']:<19}{r['max_streams']:>4}{r['streams']:>8}"
                   f"{f(r['tokens_per_s'], '.1f'):>9}{f(r['step_p50_ms'], '.1f'):>8}"
                   f"{f(r['step_p95_ms'], '.1f'):>8}{f(share, '.2f'):>7}"
                   f"{f(r['speedup_vs_piecewise'], '.2f'):>7}")
    out += ["", "GPU memory per engine (NVML used, both processes) vs voxcap's estimate",
            f"{'mode':<19}{'max':>4}{'used GiB':>10}{'estimate':>10}{'diff':>8}{'KV GiB':>8}{'start s':>9}"]
    engines = list({(r["mode"], r["max_streams"]): r for r in reversed(results)
                    if "error" not in r}.values())[::-1]  # one row per engine started
    for r in engines:
        used, est = r.get("gpu_used_bytes"), r.get("estimate_bytes")
        diff = (used - est) / est * 100 if used and est else None
        out.append(f"{r['mode']:<19}{r['max_streams']:>4}{f(used, '.2f', GIB):>10}"
                   f"{f(est, '.2f', GIB):>10}{f(diff, '+.1f'):>7}%{f(r.get('kv_cache_bytes'), '.2f', GIB):>8}"
                   f"{f(r['startup_s'], '.1f'):>9}")
    out += ["", "Start-up stages (seconds from start at which each began)"]
    for r in engines:
        out.append(f"{r['mode']} x{r['max_streams']}: " +
                   ", ".join(f"{s} {t:.1f}" for s, t in r.get("stages", [])) +
                   ("" if r.get("stages", [[""]])[-1][0] == "ready" else f", ready {r['startup_s']:.1f}"))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--modes", default=",".join(GRAPH_MODES))
    ap.add_argument("--seconds", type=float, default=10.0, help="audio per stream per run")
    ap.add_argument("--out", default="gpu_engine.json")
    ap.add_argument("--step-tokens", type=int, default=None,
                    help="vLLM's max_num_batched_tokens (default: voxcap's)")
    ap.add_argument("--sizes", default=None, metavar="LIST",
                    help="only engines of these sizes, e.g. 1 (default: 4 per mode; 1 and 2 for FDO)")
    a = ap.parse_args()
    modes = [m.strip().upper() for m in a.modes.split(",") if m.strip()]
    results = []
    sizes = {int(x) for x in a.sizes.split(",")} if a.sizes else None
    extra = {"step_tokens": a.step_tokens} if a.step_tokens else {}
    for mode, size, counts in plan(modes):
        if sizes and size not in sizes:
            continue
        settings = InProcessSettings(a.model, dummy_weights=a.dummy_weights, graph_mode=mode,
                                  max_streams=size, **extra).validated()
        print(f"gpu_engine: {mode}, engine for {size} stream(s), runs {counts}", file=sys.stderr,
              flush=True)
        rows = bench_in_child(settings, counts, a.seconds)
        for row in rows:
            print("RESULT " + json.dumps(row), flush=True)
        results.extend(rows)
    speedups(results)
    versions = {d: _version(d) for d in ("vllm", "torch", "voxcap")}
    report = {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
              "gpus": describe_gpus(), "python": platform.python_version(), "versions": versions,
              "model": a.model, "dummy_weights": a.dummy_weights, "seconds": a.seconds,
              "step_tokens": a.step_tokens,
              "results": results}
    Path(a.out).write_text(json.dumps(report, indent=2))
    print(tables(results))
    return 1 if any("error" in r for r in results) else 0


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
