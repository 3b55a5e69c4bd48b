"""``voxcap bench``: the upstream graph-mode experiment on the user's own machine.

Each (graph mode, stream count) runs in a fresh child process with a fresh engine, so one
configuration's compiled graphs, memory or crash cannot colour the next one's figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time

import numpy as np

from ..engine.settings import EngineSettings
from ..errors import ConfigError
from .options import add_engine_options, engine_settings

SAMPLE_RATE = 16000


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


def run_one(settings: EngineSettings, streams: int, seconds: float) -> dict:
    """One configuration in this process: start, push all audio at once, wait for the flush."""
    from ..engine.local import LocalEngine

    return measure(LocalEngine(settings), settings.graph_mode, streams, seconds)


def measure(engine, mode: str, streams: int, seconds: float) -> dict:
    """Start ``engine`` (any CaptionEngine), push all audio at once, wait for the flush."""
    t_start = time.perf_counter()
    engine.start()
    try:
        ready = engine.wait_ready()
        startup = time.perf_counter() - t_start
        ids, wall = feed_all(engine, streams, seconds)
        snap = engine.stats.snapshot()
        if engine.failure:
            raise RuntimeError(engine.failure.message)
        total_steps = sum(snap.steps_by_graph_mode.values())
        return {
            "mode": mode, "resolved_mode": ready.resolved_graph_mode,
            "streams": streams, "seconds": seconds, "startup_s": round(startup, 2),
            "tokens": snap.tokens, "wall_s": round(wall, 3),
            "tokens_per_s": round(snap.tokens / wall, 2) if wall > 0 else None,
            "step_p50_ms": snap.step_p50_ms, "step_p95_ms": snap.step_p95_ms,
            "graph_steps": snap.steps_by_graph_mode,
            "full_graph_share": (snap.steps_by_graph_mode.get("FULL", 0) / total_steps
                                 if total_steps else None),
            "device": ready.device,
        }
    finally:
        engine.shutdown()


def _run_child(settings: EngineSettings, streams: int, seconds: float) -> dict:
    payload = json.dumps({"settings": dataclasses.asdict(settings), "streams": streams,
                          "seconds": seconds})
    proc = subprocess.run([sys.executable, "-m", "voxcap.commands.bench", "--one", payload],
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"mode": settings.graph_mode, "streams": streams, "error": tail[:300]}
    return json.loads(lines[-1])


def add_parser(sub) -> list[str]:
    b = sub.add_parser("bench", help="compare CUDA graph modes on this machine",
                       description="For each graph mode and stream count, run N seconds of "
                                   "speech-like audio per stream through a fresh engine as fast as "
                                   "possible; report tokens/s, step latency, start-up time and the "
                                   "speedup of each mode over PIECEWISE.")
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
    configs = [(settings_for(args, max_streams=n, graph_mode=m), n) for m in modes for n in counts]
    results = []
    for settings, n in configs:  # all validated before the first (slow) start
        if not args.json:
            print(f"bench: {settings.graph_mode}, {n} stream(s)...", file=sys.stderr, flush=True)
        results.append(_run_child(settings, n, args.seconds))
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

    engines = [(make_engine(args, max_streams=n, max_buffer_s=None, rollover=False), n)
               for n in counts]
    results = []
    for engine, n in engines:  # all validated before the first run
        if not args.json:
            print(f"bench: remote, {n} stream(s)...", file=sys.stderr, flush=True)
        try:
            r = measure(engine, "remote", n, args.seconds)
        except Exception as exc:  # noqa: BLE001 - one row per failed configuration
            r = {"mode": "remote", "streams": n, "error": str(getattr(exc, "message", exc))}
        r["speedup_vs_piecewise"] = None
        results.append(r)
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
    settings = EngineSettings(**fields)
    print(json.dumps(run_one(settings, spec["streams"], spec["seconds"])), flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m voxcap.commands.bench")
    parser.add_argument("--one", required=True, help="JSON: settings, streams, seconds")
    sys.exit(_main_one(parser.parse_args().one))
