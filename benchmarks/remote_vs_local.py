"""Remote engine (vLLM's OpenAI server, /v1/realtime over a local websocket) vs. the in-process
engine, same tiny model (dummy weights), same vLLM settings (float32, eager, max_model_len
4096), on this machine, one after the other so they never share the CPU.

Usage: python -m benchmarks.remote_vs_local [--seconds 20] [--live-seconds 12] [--json]

For each engine:
* fast: all audio pushed at once, 1 and 2 streams: tokens/s = tokens / (first push -> last
  StreamFinished);
* live: one stream fed in real time (one 80 ms block every 80 ms): step latency p50/p95 from
  the engine's own EngineStats. In-process: a prompt handed to vLLM -> its token back. Remote:
  the append completing a step's audio handed to the websocket -> its delta read back (the
  client-observed round trip; see voxcap/engine/remote/engine.py). In "fast" the remote latency
  includes the queue of audio ahead of the step, so only the live figure compares.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from voxcap.framing import STEP_SAMPLES, STEP_SECONDS

os.environ.setdefault("OMP_NUM_THREADS", "1")

MAX_MODEL_LEN = 4096


def speech_like(seconds: float, seed: int = 0):
    from voxcap.commands.bench import speech_like as make

    return make(seconds, seed)


def fast(engine, streams: int, seconds: float) -> dict:
    from voxcap.commands.bench import feed_all

    ids, wall = feed_all(engine, streams, seconds)
    tokens = sum(s.tokens for s in engine.stats.snapshot().streams if s.stream_id in ids)
    return {"streams": streams, "tokens": tokens, "wall_s": round(wall, 3),
            "tokens_per_s": round(tokens / wall, 1)}


def live(engine, seconds: float) -> dict:
    sid = engine.open_stream()
    a = speech_like(seconds, seed=7)
    t0 = time.perf_counter()
    for k, i in enumerate(range(0, a.size, STEP_SAMPLES)):
        delay = t0 + k * STEP_SECONDS - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        engine.push_audio(sid, a[i:i + STEP_SAMPLES])
    engine.close_stream(sid)
    assert engine.wait_stream(sid, timeout=600)
    snap = next(s for s in engine.stats.snapshot().streams if s.stream_id == sid)
    return {"seconds": seconds, "tokens": snap.tokens,
            "step_p50_ms": round(snap.step_p50_ms, 1), "step_p95_ms": round(snap.step_p95_ms, 1)}


def run(engine, seconds: float, live_seconds: float) -> dict:
    t0 = time.perf_counter()
    engine.start()
    ready = engine.wait_ready(timeout=600)
    out = {"ready_s": round(time.perf_counter() - t0, 1), "device": ready.device,
           "graph_mode": ready.resolved_graph_mode,
           "load_avg_1m": round(os.getloadavg()[0], 2)}  # other work on this machine
    try:
        fast(engine, 1, 3.0)  # warm-up (first-request costs), not reported
        out["fast_1"] = fast(engine, 1, seconds)
        out["fast_2"] = fast(engine, 2, seconds)
        out["live_1"] = live(engine, live_seconds)
        out["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    finally:
        engine.shutdown()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--live-seconds", type=float, default=12.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    from tests.support.vllm_server import VllmServer
    from voxcap.engine.model.tiny import write_tiny_model
    from voxcap.engine.remote.engine import RemoteEngine
    from voxcap.engine.remote.settings import RemoteSettings

    tmp = Path(tempfile.mkdtemp(prefix="voxcap-remote-bench-"))
    os.environ.setdefault("VOXCAP_CACHE_DIR", str(tmp / "cache"))
    model = write_tiny_model(tmp / "tiny")
    results = {}
    server = VllmServer(model, max_model_len=MAX_MODEL_LEN, log_path=tmp / "server.log")  # voxcap serve
    t0 = time.perf_counter()
    server.start()
    print(f"server up in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    try:
        settings = RemoteSettings(server.url, server.served_name, api_key=server.api_key,
                                  max_streams=2, max_buffer_s=None)
        results["remote"] = run(RemoteEngine(settings), args.seconds, args.live_seconds)
    finally:
        server.stop()
    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings

    local = InProcessSettings(str(model), dummy_weights=True, max_model_len=MAX_MODEL_LEN,
                           max_streams=2, enforce_eager=True, dtype="float32")
    results["local"] = run(LocalEngine(local), args.seconds, args.live_seconds)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'engine':<8}{'tok/s 1 stream':>16}{'tok/s 2 streams':>17}"
          f"{'live p50 ms':>13}{'live p95 ms':>13}{'load 1m':>9}")
    for name, r in results.items():
        print(f"{name:<8}{r['fast_1']['tokens_per_s']:>16}{r['fast_2']['tokens_per_s']:>17}"
              f"{r['live_1']['step_p50_ms']:>13}{r['live_1']['step_p95_ms']:>13}"
              f"{r['load_avg_1m']:>9}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
