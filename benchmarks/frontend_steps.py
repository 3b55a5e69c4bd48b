"""The app's engine with Voxtral's audio front end batched across sessions (a CUDA graph on a
GPU) and without it, in one run: step time at 1 and 2 streams paced in real time, the engine
core's CPU share of a core while it captions one stream, the tokens of both, and which front-end
path ran (issue 37 item 5; voxcap/engine/vllm_adapter/audio_frontend.py).

Variants, each in a process of its own (vLLM loads voxcap's plugin once per process, so the
switch cannot change within one): "off" (``VOXCAP_VLLM_BATCHED_FRONTEND=0``: vLLM's per-session
path), "on" (the default), "eager" (batched, CUDA graphs off), "check" (on, and every batched
item also computed by vLLM's path in the engine and compared: ``VOXCAP_VLLM_FRONTEND_CHECK=1``).
Per stream count, each stream gets SECONDS of speech-like audio in 80 ms blocks, every block when
its time comes (one clock for all streams), as a microphone would; a step's time is its prompt
to its token (EngineStats), each stream's first 3 steps left out. The CPU share is the engine
processes' user + system time (/proc/PID/stat) over the paced part of the 1-stream run ÷ its
wall time.

  python -m benchmarks.frontend_steps [--model DIR [--dummy-weights]] [--variants off,on]
      [--streams 1,2] [--seconds 30] [--max-streams 2] [--out frontend_steps.json]

Without --model: the tiny model with random weights from seed 0, whose tokens follow the audio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.percentiles import percentile
from benchmarks.lib.processes import run_module
from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES

SKIP_STEPS = 3
VARIANT_ENV = {
    "off": {"VOXCAP_VLLM_BATCHED_FRONTEND": "0"},
    "on": {"VOXCAP_VLLM_BATCHED_FRONTEND": "1"},
    "eager": {"VOXCAP_VLLM_BATCHED_FRONTEND": "1", "VOXCAP_VLLM_FRONTEND_GRAPHS": "0"},
    "check": {"VOXCAP_VLLM_BATCHED_FRONTEND": "1", "VOXCAP_VLLM_FRONTEND_CHECK": "1"},
}


def cpu_seconds(pids) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def worker_counts(engine) -> dict | None:
    """The front end's counts in the engine's worker; None where it is not applied."""
    import asyncio

    from voxcap.engine.vllm_adapter.audio_frontend import COUNTS_RPC

    try:
        (counts,) = asyncio.run_coroutine_threadsafe(
            engine._engine.collective_rpc(COUNTS_RPC), engine._loop).result(60)
    except Exception:  # noqa: BLE001 - "off": the worker has no such method
        return None
    return counts


def paced(engine, n: int, seconds: float) -> dict:
    """n streams fed in real time; their step times, tokens and the engine's CPU share."""
    from voxcap.commands.bench import speech_like

    latencies: dict[str, list[float]] = {}
    engine.stats.latency_observer = lambda sid, ms: latencies.setdefault(sid, []).append(ms)
    ids = [engine.open_stream(f"s{k}") for k in range(n)]
    audio = [speech_like(seconds, seed=20 + k) for k in range(n)]
    pids = engine.engine_pids()
    blocks = audio[0].size // STEP_SAMPLES
    t0 = time.perf_counter() + 0.2
    cpu = {}
    for k in range(blocks):
        wait = t0 + k * STEP_SAMPLES / SAMPLE_RATE - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        if k == 25:  # 2 s in: the streams' first steps are behind
            cpu["t"], cpu["s"] = time.perf_counter(), cpu_seconds(pids)
        for sid, x in zip(ids, audio, strict=True):
            engine.push_audio(sid, x[k * STEP_SAMPLES:(k + 1) * STEP_SAMPLES])
    share = (cpu_seconds(pids) - cpu["s"]) / (time.perf_counter() - cpu["t"])
    for sid in ids:
        engine.close_stream(sid)
    for sid in ids:
        engine.wait_stream(sid, timeout=600)
    engine.stats.latency_observer = None
    steps = [ms for sid in ids for ms in latencies.get(sid, [])[SKIP_STEPS:]]
    return {"streams": n, "stream_ids": ids, "steps": len(steps),
            "step_p50_ms": percentile(steps, 50, digits=2),
            "step_p95_ms": percentile(steps, 95, digits=2),
            "step_mean_ms": round(sum(steps) / len(steps), 2),
            "engine_cpu_share": round(share, 3), "engine_pids": pids}


def child(a) -> dict:
    """One variant: one engine, the stream counts in turn."""
    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings
    from voxcap.events import TextDelta

    os.environ.update(VARIANT_ENV[a.child])
    ids: dict[str, list[int]] = {}

    def on_event(ev):
        if isinstance(ev, TextDelta):
            ids.setdefault(ev.stream_id, []).extend(ev.token_ids)

    settings = InProcessSettings(a.model, dummy_weights=a.dummy_weights,
                                 max_streams=a.max_streams).validated()
    engine = LocalEngine(settings, on_event=on_event, verbose=a.logs != "")
    t = time.perf_counter()
    engine.start()
    ready = engine.wait_ready(timeout=1800)
    out = {"variant": a.child, "env": VARIANT_ENV[a.child], "ready_s": round(time.perf_counter() - t, 1),
           "resolved_mode": ready.resolved_graph_mode, "runs": []}
    try:
        for n in [int(x) for x in a.streams.split(",")]:
            run = paced(engine, n, a.seconds)
            run["tokens"] = [ids.get(sid, []) for sid in run.pop("stream_ids")]
            out["runs"].append(run)
            print(f"{a.child}: {n} stream(s) p50 {run['step_p50_ms']} ms, p95 "
                  f"{run['step_p95_ms']} ms, engine CPU {100 * run['engine_cpu_share']:.0f} % "
                  "of a core", flush=True)
        out["frontend_counts"] = worker_counts(engine)
    finally:
        engine.shutdown()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="")
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--variants", default="off,on")
    ap.add_argument("--streams", default="1,2")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--max-streams", type=int, default=2)
    ap.add_argument("--out", default="")
    ap.add_argument("--logs", default="", help="folder for each variant's output with vLLM's log")
    ap.add_argument("--child", choices=sorted(VARIANT_ENV), help=argparse.SUPPRESS)
    ap.add_argument("--child-out", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        Path(a.child_out).write_text(json.dumps(child(a)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        if not a.model:
            from voxcap.engine.model.tiny import write_tiny_model

            a.model = str(write_tiny_model(Path(tmp) / "tiny", max_len=4096, weights_seed=0))
        results = []
        for variant in a.variants.split(","):
            path = Path(tmp) / f"{variant}.json"
            args = ["--child", variant, "--child-out", str(path), "--model", a.model,
                    "--streams", a.streams, "--seconds", str(a.seconds),
                    "--max-streams", str(a.max_streams), "--logs", a.logs]
            args += ["--dummy-weights"] if a.dummy_weights else []
            proc = run_module("benchmarks.frontend_steps", *args)
            print(proc.stdout, end="", flush=True)
            if a.logs:
                Path(a.logs).mkdir(parents=True, exist_ok=True)
                (Path(a.logs) / f"{variant}.log").write_text(proc.stdout + proc.stderr)
            if not path.exists():
                results.append({"variant": variant, "failure": proc.stderr[-3000:]})
                print(f"{variant}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
                continue
            results.append(json.loads(path.read_text()))
    report = {"model": a.model, "dummy_weights": a.dummy_weights, "seconds": a.seconds,
              "variants": results, "same_tokens_as_first": same_tokens(results)}
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=2))
    print(table(results))
    print("tokens the same as the first variant's:", report["same_tokens_as_first"])
    return 0


def same_tokens(results) -> dict:
    ok = [r for r in results if "runs" in r]
    if len(ok) < 2:
        return {}
    first = {run["streams"]: run["tokens"] for run in ok[0]["runs"]}
    return {r["variant"]: {run["streams"]: run["tokens"] == first.get(run["streams"])
                           for run in r["runs"]} for r in ok[1:]}


def table(results) -> str:
    lines = ["| variant | streams | step p50 ms | step p95 ms | engine CPU, % of a core | "
             "front end (batched items / graph items / per-session items) |",
             "|---|---|---|---|---|---|"]
    for r in results:
        c = r.get("frontend_counts") or {}
        path = (f"{c.get('batched_items')} / {c.get('graph_items')} / {c.get('per_session_items')}"
                if c else "vLLM's per-session path")
        if c.get("checked_items"):
            path += (f"; checked {c['checked_items']}, {c['differing_items']} differ "
                     f"(max {c['max_abs_diff']:g}); host ms a pass, batched / vLLM's: "
                     f"{1000 * c['batched_host_s'] / c['batched_passes']:.3f} / "
                     f"{1000 * c['checked_per_session_host_s'] / c['batched_passes']:.3f}")
        for run in r.get("runs", []):
            lines.append(f"| {r['variant']} | {run['streams']} | {run['step_p50_ms']} | "
                         f"{run['step_p95_ms']} | {100 * run['engine_cpu_share']:.1f} | {path} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
