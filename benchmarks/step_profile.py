"""Where a streaming step's time goes: step latency, GPU busy share and (optionally) py-spy
profiles of the app and of vLLM's engine core, per stream count, for one engine configuration.

One engine (voxcap's LocalEngine, sized for --max-streams) is started; for each stream count,
--seconds of speech-like audio per stream is pushed as fast as the engine takes it (as
``voxcap bench`` does). While it runs, NVML's utilization ("share of time a kernel ran", sampled
every 0.1 s) gives the GPU's busy time per step; with --spy, py-spy records the engine-core
process and the app (idle frames included, so waits show) for --spy-seconds from 2 s into the run.

  python -m benchmarks.step_profile --model DIR --dummy-weights [--graph-mode FULL_DECODE_ONLY]
      [--max-streams 4] [--streams 1,4] [--seconds 60] [--extra-args JSON] [--spy DIR]
      [--label NAME] [--out step_profile.json]

Run one configuration per invocation (e.g. --extra-args '{"disable_log_stats": true}') and
compare the JSON files. The py-spy files (collapsed stacks, "raw") summarise with
``python -m benchmarks.step_profile --summarise FILE``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from voxcap.gpu import visible_gpu_index

from .lib.gpu import GpuSampler
from .lib.percentiles import percentile


def summarise(path: str, top: int = 40) -> str:
    """Inclusive and self shares of a py-spy raw profile, by function (file:line dropped)."""
    inclusive, own, total = collections.Counter(), collections.Counter(), 0
    for line in Path(path).read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        count = int(n)
        total += count
        frames = [_frame(f) for f in stack.split(";")]
        for f in set(frames):
            inclusive[f] += count
        own[frames[-1]] += count
    out = [f"{path}: {total} samples", "inclusive:"]
    out += [f"  {100 * v / total:5.1f}%  {k}" for k, v in inclusive.most_common(top)]
    out += ["self:"] + [f"  {100 * v / total:5.1f}%  {k}" for k, v in own.most_common(top // 2)]
    return "\n".join(out)


def _frame(raw: str) -> str:
    """"func (path/file.py:123)" -> "func (file.py)"."""
    func, _, where = raw.partition(" (")
    return f"{func} ({where.rsplit('/', 1)[-1].split(':')[0].rstrip(')')})" if where else func


def spy(pids: dict[str, int], seconds: float, out_dir: Path, tag: str) -> list[subprocess.Popen]:
    exe = shutil.which("py-spy")
    if not exe:
        print("step_profile: py-spy not found, no profile", file=sys.stderr)
        return []
    procs = []
    for name, pid in pids.items():
        path = out_dir / f"{tag}-{name}.txt"
        procs.append(subprocess.Popen(
            [exe, "record", "-p", str(pid), "-r", "250", "-d", str(int(seconds)), "--idle",
             "-f", "raw", "-o", str(path), "--nonblocking"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def run(a) -> dict:
    import numpy as np

    from voxcap.commands.bench import speech_like
    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings

    extra = json.loads(a.extra_args) if a.extra_args else {}
    counts = [int(x) for x in a.streams.split(",")]
    settings = InProcessSettings(a.model, dummy_weights=a.dummy_weights, graph_mode=a.graph_mode,
                              max_streams=a.max_streams, extra_engine_args=extra).validated()
    engine = LocalEngine(settings)
    t0 = time.perf_counter()
    engine.start()
    ready = engine.wait_ready()
    result = {"label": a.label, "extra_args": extra, "startup_s": round(time.perf_counter() - t0, 2),
              "resolved_mode": ready.resolved_graph_mode,
              "start_method": engine.start_method, "token_carry": engine.token_carry, "runs": []}
    spy_dir = Path(a.spy) if a.spy else None
    if spy_dir:
        spy_dir.mkdir(parents=True, exist_ok=True)
    try:
        for n in counts:
            latencies: list[float] = []
            engine.stats.latency_observer = lambda _sid, ms, out=latencies: out.append(ms)
            tokens0 = engine.stats.snapshot().tokens
            ids = [engine.open_stream() for _ in range(n)]
            audio = [speech_like(a.seconds, seed=i) for i in range(n)]
            procs: list[subprocess.Popen] = []
            with GpuSampler([visible_gpu_index()]) as gpu:
                t = time.perf_counter()
                for sid, x in zip(ids, audio, strict=True):
                    for i in range(0, x.size, 8000):
                        engine.push_audio(sid, x[i:i + 8000])
                    engine.close_stream(sid)
                if spy_dir:
                    time.sleep(2.0)
                    procs = spy({"core": engine.engine_pids()[0], "app": os.getpid()},
                                a.spy_seconds, spy_dir, f"{a.label}-x{n}")
                for sid in ids:
                    engine.wait_stream(sid, timeout=1800)
                wall = time.perf_counter() - t
            for p in procs:
                p.wait(60)
            engine.stats.latency_observer = None
            tokens = engine.stats.snapshot().tokens - tokens0
            util = gpu.mean()
            steps = len(latencies) / n if n else 0  # engine steps ~ tokens of one stream
            row = {"streams": n, "tokens": tokens, "wall_s": round(wall, 2),
                   "tokens_per_s": round(tokens / wall, 1),
                   "step_p50_ms": percentile(latencies, 50, digits=2),
                   "step_p95_ms": percentile(latencies, 95, digits=2),
                   "step_mean_ms": round(float(np.mean(latencies)), 2),
                   # a stream's tokens come this often (wall / steps): the step time a pipelined
                   # feed (token carry) is judged by, equal to the mean step without it
                   "interval_ms": round(wall * 1000 / steps, 2) if steps else None,
                   "gpu_util_pct": round(util, 1) if util is not None else None,
                   "gpu_busy_ms_per_step": (round(util / 100 * wall * 1000 / steps, 2)
                                            if util is not None and steps else None)}
            print("RESULT " + json.dumps(row), flush=True)
            result["runs"].append(row)
    finally:
        engine.shutdown()
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--graph-mode", default="FULL_DECODE_ONLY")
    ap.add_argument("--max-streams", type=int, default=4)
    ap.add_argument("--streams", default="1,4")
    ap.add_argument("--seconds", type=float, default=60.0, help="audio per stream per run")
    ap.add_argument("--extra-args", default="", help="JSON dict of more vLLM engine args")
    ap.add_argument("--spy", default="", help="folder for py-spy profiles (py-spy on PATH)")
    ap.add_argument("--spy-seconds", type=float, default=8.0)
    ap.add_argument("--label", default="base")
    ap.add_argument("--out", default="")
    ap.add_argument("--summarise", default="", metavar="FILE", help="print a py-spy raw file's top")
    a = ap.parse_args()
    if a.summarise:
        print(summarise(a.summarise))
        return 0
    if not a.model:
        ap.error("--model is required")
    result = run(a)
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=2))
    for r in result["runs"]:
        print(f"{a.label}: {r['streams']} stream(s): p50 {r['step_p50_ms']} ms, p95 "
              f"{r['step_p95_ms']} ms, a token every {r['interval_ms']} ms a stream, "
              f"{r['tokens_per_s']} tok/s, GPU busy "
              f"{r['gpu_util_pct']} % = {r['gpu_busy_ms_per_step']} ms/step "
              f"(start {result['startup_s']} s, {result['start_method']}, token carry "
              f"{result['token_carry']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
