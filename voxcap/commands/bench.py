"""``voxcap bench``: the upstream graph-mode experiment on the user's own machine.

As upstream measured it (vLLM PR #51167): one engine per graph mode, sized for the largest
stream count (max_num_seqs), and every stream count run inside it. Each mode's engine lives in
a fresh child process, so one mode's compiled graphs, memory or crash cannot colour the next
one's figures; an engine start costs a minute or two on a GPU, so it happens once per mode.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import subprocess
import sys
import time

import numpy as np

from ..engine.settings import InProcessSettings
from ..errors import ConfigError
from ..framing import SAMPLE_RATE
from .options import add_engine_options, engine_settings

log = logging.getLogger(__name__)


def speech_like(seconds: float, seed: int = 0) -> np.ndarray:
    """Deterministic speech-like audio: voiced syllables (harmonics of a wandering pitch under a
    syllable envelope) separated by short pauses, at a conversational level."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SAMPLE_RATE)
    out = np.zeros(n, np.float32)
    pos = 0
    while pos < n:
        syl = int(rng.uniform(0.12, 0.3) * SAMPLE_RATE)
        t = np.arange(syl) / SAMPLE_RATE
        f0 = rng.uniform(100, 220) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(2, 5) * t))
        phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
        voiced = sum(np.sin(k * phase) / k for k in range(1, 8))
        env = np.sin(np.pi * t / t[-1]) ** 2 if syl > 1 else np.ones(1)
        seg = (0.15 * voiced * env + 0.01 * rng.standard_normal(syl)).astype(np.float32)
        end = min(n, pos + syl)
        out[pos:end] = seg[: end - pos]
        pos = end + int(rng.uniform(0.02, 0.25) * SAMPLE_RATE)
    return out


def feed_all(engine, streams: int, seconds: float) -> tuple[list[str], float]:
    """Open ``streams`` streams, push ``seconds`` of speech-like audio into each as fast as
    possible, close them and wait for their flush; return (stream ids, wall seconds)."""
    ids = [engine.open_stream() for _ in range(streams)]
    audio = [speech_like(seconds, seed=i) for i in range(streams)]
    t0 = time.perf_counter()
    for sid, a in zip(ids, audio, strict=True):
        for i in range(0, a.size, 8000):
            engine.push_audio(sid, a[i:i + 8000])
        engine.close_stream(sid)
    for sid in ids:
        if not engine.wait_stream(sid, timeout=max(600.0, seconds * 20)):
            raise TimeoutError(f"stream {sid} did not finish")
    return ids, time.perf_counter() - t0


def run_mode(settings: InProcessSettings, counts: list[int], seconds: float) -> list[dict]:
    """One graph mode in this process: one engine (sized for max(counts) streams), then each
    stream count in turn inside it."""
    from ..engine.inprocess.engine import LocalEngine

    return measure(LocalEngine(settings), settings.graph_mode, counts, seconds)


def measure(engine, mode: str, counts: list[int], seconds: float) -> list[dict]:
    """Start ``engine`` (any CaptionEngine); for each stream count push all audio at once and
    wait for the flush. One result per count, each with the engine's start time."""
    gpu_before = gpu_used_bytes()
    t_start = time.perf_counter()
    engine.start()
    try:
        ready = engine.wait_ready()
        startup = time.perf_counter() - t_start
        start = {"startup_s": round(startup, 2), "stages": _stages(engine)}
        gpu_after = gpu_used_bytes()
        if gpu_before is not None and gpu_after is not None:
            start["gpu_used_bytes"] = gpu_after - gpu_before  # this engine: both processes
            start.update(_estimate(engine))
        return [dict(_measure_run(engine, ready, mode, n, seconds, startup), **start)
                for n in counts]
    finally:
        engine.shutdown()


def gpu_used_bytes() -> int | None:
    """GPU memory in use on the device this process runs on (NVML), if there is one."""
    from ..gpu import read_gpu, visible_gpu_index

    reading = read_gpu(visible_gpu_index())
    return reading.memory_used_bytes if reading else None


def _stages(engine) -> list[tuple[str, float]]:
    """The engine's start-up stages (EngineProgress) with the seconds at which each began."""
    from ..events import EngineProgress

    events = getattr(engine, "events", None)
    stages: list[tuple[str, float]] = []
    while events is not None and not events.empty():
        ev = events.get_nowait()
        if isinstance(ev, EngineProgress) and (not stages or stages[-1][0] != ev.stage):
            stages.append((ev.stage, round(ev.elapsed_s, 2)))
    return stages


def _estimate(engine) -> dict:
    """voxcap's estimate of the local engine's GPU footprint, beside what was measured."""
    from ..engine.sizing import memory

    info, plan = getattr(engine, "model_info", None), getattr(engine, "kv_plan", None)
    if info is None or plan is None:
        return {}
    weights = engine.weights_estimate_bytes
    return {"estimate_bytes": memory.footprint_bytes(weights, engine.kv_budget),
            "weights_bytes": weights, "kv_cache_bytes": engine.kv_budget}


def _measure_run(engine, ready, mode: str, streams: int, seconds: float, startup: float) -> dict:
    latencies: list[float] = []
    engine.stats.latency_observer = lambda _sid, ms: latencies.append(ms)
    steps_before = dict(engine.stats.snapshot().steps_by_graph_mode)
    tokens_before = engine.stats.snapshot().tokens
    ids, wall = feed_all(engine, streams, seconds)
    engine.stats.latency_observer = None
    snap = engine.stats.snapshot()
    if engine.failure:
        raise RuntimeError(engine.failure.message)
    steps = {k: v - steps_before.get(k, 0) for k, v in snap.steps_by_graph_mode.items()}
    steps = {k: v for k, v in steps.items() if v}
    total_steps = sum(steps.values())
    tokens = snap.tokens - tokens_before
    return {
        "mode": mode, "resolved_mode": ready.resolved_graph_mode,
        "streams": streams, "max_streams": ready.max_streams, "seconds": seconds,
        "startup_s": round(startup, 2), "tokens": tokens, "wall_s": round(wall, 3),
        "tokens_per_s": round(tokens / wall, 2) if wall > 0 else None,
        "step_p50_ms": _pct(latencies, 50), "step_p95_ms": _pct(latencies, 95),
        "graph_steps": steps,
        "full_graph_share": steps.get("FULL", 0) / total_steps if total_steps else None,
        "device": ready.device,
    }


def _pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if values else None


def bench_in_child(settings: InProcessSettings, counts: list[int], seconds: float) -> list[dict]:
    """One engine of ``settings`` in a fresh process (its own CUDA context), a run of ``seconds``
    per stream count in it: a row each, an error row for each when the child failed."""
    payload = json.dumps({"settings": dataclasses.asdict(settings), "counts": counts,
                          "seconds": seconds})
    proc = subprocess.run([sys.executable, "-m", "voxcap.commands.bench", "--one", payload],
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"mode": settings.graph_mode, "streams": n, "error": tail[:300]} for n in counts]
    return json.loads(lines[-1])


def add_parser(sub) -> list[str]:
    b = sub.add_parser("bench", help="compare CUDA graph modes on this machine",
                       description="For each graph mode, start one engine sized for the largest "
                                   "stream count; for each stream count, run N seconds of "
                                   "speech-like audio per stream through it as fast as possible; "
                                   "report tokens/s, step latency, the share of steps replayed as "
                                   "full CUDA graphs, start-up time and the speedup of each mode "
                                   "over PIECEWISE.")
    b.add_argument("--modes", default="PIECEWISE,FULL_DECODE_ONLY", metavar="LIST",
                   help="comma-separated graph modes (default PIECEWISE,FULL_DECODE_ONLY)")
    b.add_argument("--streams", default="1", metavar="LIST", help="comma-separated stream counts")
    b.add_argument("--seconds", type=float, default=30.0, metavar="N", help="audio per stream")
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_engine_options(b)
    return ["bench"]


def run(args) -> int:
    settings_for = engine_settings
    modes = [m.strip().upper() for m in args.modes.split(",") if m.strip()]
    try:
        counts = [int(s) for s in args.streams.split(",") if s.strip()]
    except ValueError:
        raise ConfigError(f"--streams {args.streams!r} is not a list of numbers",
                          "e.g. --streams 1,2,4") from None
    if not counts or min(counts) < 1:
        raise ConfigError("--streams needs positive stream counts", "e.g. --streams 1,2,4")
    if args.seconds <= 0:
        raise ConfigError("--seconds must be positive", "e.g. --seconds 30")
    if args.engine == "remote":  # the server's own configuration: one run per stream count
        return _run_remote(args, counts)
    configs: list[InProcessSettings] = []
    for mode in modes:
        settings = settings_for(args, max_streams=max(counts), graph_mode=mode)
        assert isinstance(settings, InProcessSettings)  # --engine remote returned above
        configs.append(settings)
    results = []
    for settings in configs:  # all validated before the first (slow) start
        if not args.json:
            print(f"bench: {settings.graph_mode}: one engine for {max(counts)} stream(s), runs of "
                  f"{', '.join(map(str, counts))}...", file=sys.stderr, flush=True)
        results.extend(bench_in_child(settings, counts, args.seconds))
    for r in results:
        base = next((b for b in results if b.get("mode") == "PIECEWISE"
                     and b.get("streams") == r.get("streams") and "error" not in b), None)
        if base and "error" not in r and base.get("tokens_per_s"):
            r["speedup_vs_piecewise"] = round(r["tokens_per_s"] / base["tokens_per_s"], 3)
        else:
            r["speedup_vs_piecewise"] = None
    if args.json:
        print(json.dumps({"results": results}, indent=2))
    else:
        print(format_table(results))
    return 1 if any("error" in r for r in results) else 0


def _run_remote(args, counts: list[int]) -> int:
    from .options import make_engine

    engine = make_engine(args, max_streams=max(counts), max_buffer_s=None, rollover=False)
    if not args.json:
        print(f"bench: remote, runs of {', '.join(map(str, counts))} stream(s)...", file=sys.stderr,
              flush=True)
    try:
        results = measure(engine, "remote", counts, args.seconds)
    except Exception as exc:  # one row per failed configuration
        log.warning("remote bench failed", exc_info=True)
        results = [{"mode": "remote", "streams": n, "error": str(getattr(exc, "message", exc))}
                   for n in counts]
    for r in results:
        r["speedup_vs_piecewise"] = None
    print(json.dumps({"results": results}, indent=2) if args.json else format_table(results))
    return 1 if any("error" in r for r in results) else 0


def format_table(results: list[dict]) -> str:
    def f(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "n/a"

    head = (f"{'mode':<19}{'resolved':<19}{'streams':>8}{'tok/s':>9}{'p50 ms':>9}{'p95 ms':>9}"
            f"{'start s':>9}{'full%':>7}{'vs PW':>7}")
    rows = [head, "-" * len(head)]
    for r in results:
        if "error" in r:
            rows.append(f"{r['mode']:<19}{'failed':<19}{r['streams']:>8}  {r['error']}")
            continue
        share = r["full_graph_share"] * 100 if r["full_graph_share"] is not None else None
        rows.append(
            f"{r['mode']:<19}{r['resolved_mode']:<19}{r['streams']:>8}{f(r['tokens_per_s'], '.1f'):>9}"
            f"{f(r['step_p50_ms'], '.1f'):>9}{f(r['step_p95_ms'], '.1f'):>9}"
            f"{f(r['startup_s'], '.1f'):>9}{f(share, '.0f'):>7}"
            f"{f(r['speedup_vs_piecewise'], '.2f'):>7}")
    return "\n".join(rows)


def _main_one(payload: str) -> int:
    spec = json.loads(payload)
    fields = spec["settings"]
    fields["capture_sizes"] = tuple(fields["capture_sizes"]) if fields.get("capture_sizes") else None
    settings = InProcessSettings(**fields)
    print(json.dumps(run_mode(settings, spec["counts"], spec["seconds"])), flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m voxcap.commands.bench")
    parser.add_argument("--one", required=True, help="JSON: settings, streams, seconds")
    sys.exit(_main_one(parser.parse_args().one))
