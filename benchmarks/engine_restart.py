"""Engine restarts inside one app process, as the settings panel's graph-mode switch does them:
each engine is shut down (its GPU memory given back) and the next one started with another mode.
The first start pays the imports; later ones fork a new engine core from the warm app.

usage:
  python -m benchmarks.engine_restart --model DIR [--dummy-weights]
      [--modes FULL_DECODE_ONLY,PIECEWISE,FULL_DECODE_ONLY] [--max-streams 2] [--out restart.json]
Prints, per start: the mode, seconds from start() to ready, the shutdown that preceded it, and
how vLLM started its engine core. Whether a mode's compiled code was in the cache shows in the
times (a mode's first compile takes about a minute on the H200, a cached one seconds).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--dummy-weights", action="store_true")
    p.add_argument("--modes", default="FULL_DECODE_ONLY,PIECEWISE,FULL_DECODE_ONLY")
    p.add_argument("--max-streams", type=int, default=2)
    p.add_argument("--out")
    args = p.parse_args()

    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings

    rows, shutdown_s = [], 0.0
    for i, mode in enumerate(args.modes.split(",")):
        settings = InProcessSettings(args.model, dummy_weights=args.dummy_weights, graph_mode=mode,
                                  max_streams=args.max_streams)
        t = time.perf_counter()
        engine = LocalEngine(settings).start()
        ready = engine.wait_ready(timeout=900)
        ready_s = time.perf_counter() - t
        row = {"start": i + 1, "mode": mode, "resolved": ready.resolved_graph_mode,
               "ready_s": round(ready_s, 2), "after_shutdown_s": round(shutdown_s, 2),
               "since_process_start_s": round(time.perf_counter() - T0, 2),
               "engine_core_started_by": engine.start_method}
        rows.append(row)
        print(json.dumps(row), flush=True)
        t = time.perf_counter()
        engine.shutdown()
        shutdown_s = time.perf_counter() - t
    print(f"{'start':>5} {'mode':<18} {'ready s':>8} {'shutdown before s':>18}  core")
    for r in rows:
        print(f"{r['start']:>5} {r['mode']:<18} {r['ready_s']:>8.1f} {r['after_shutdown_s']:>18.1f}  "
              f"{r['engine_core_started_by']}")
    print(f"last shutdown {shutdown_s:.1f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"starts": rows, "last_shutdown_s": round(shutdown_s, 2)}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
