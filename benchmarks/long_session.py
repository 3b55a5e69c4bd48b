"""Step time over one long caption stream with session rollover, as the app runs it.

voxcap's engine as every front end builds it (``build_engine``: LocalEngine inside RollingEngine)
captions --minutes of deterministic speech-like audio on one stream, as fast as the engine
takes it while keeping at most --lead seconds of audio ahead of it (so the rollover policy's
latency check sees the engine as a live stream would). Prints, per minute of audio, the step
p50/p95 (chunk handed to vLLM -> its token back), the rollovers, and the largest p95 against
the first minute's.

  python -m benchmarks.long_session --model DIR --dummy-weights [--minutes 30]
      [--soft S --hard S --latency-bound MS] [--out long_session.json]

Without --soft/--hard/--latency-bound the app's default policy (RolloverPolicy) is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

from voxcap.framing import SAMPLE_RATE
from voxcap.framing import STEP_SECONDS as STEP_S

from .lib.percentiles import percentile


def with_sentence_pauses(audio, every_s: float = 9.0, pause_s: float = 0.6):
    """speech_like's gaps are word gaps (< 0.25 s); a talk also pauses between sentences, where
    the rollover policy prefers to cut: silence ``pause_s`` long every ``every_s``."""
    import numpy as np

    step, gap = int(every_s * SAMPLE_RATE), int(pause_s * SAMPLE_RATE)
    parts = [np.concatenate([audio[i:i + step], np.zeros(gap, audio.dtype)])
             for i in range(0, audio.size, step)]
    return np.concatenate(parts)[:audio.size]


def main() -> int:
    import numpy as np

    from voxcap.commands.bench import speech_like
    from voxcap.engine.factory import build_engine
    from voxcap.engine.rollover import RolloverPolicy
    from voxcap.engine.settings import InProcessSettings
    from voxcap.events import SessionRolled

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--graph-mode", default="FULL_DECODE_ONLY")
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--lead", type=float, default=2.0, help="seconds of audio kept ahead")
    ap.add_argument("--soft", type=float, default=None)
    ap.add_argument("--hard", type=float, default=None)
    ap.add_argument("--latency-bound", type=float, default=None)
    ap.add_argument("--out", default="")
    a = ap.parse_args()

    policy = RolloverPolicy()
    for field, value in (("soft_s", a.soft), ("hard_s", a.hard), ("latency_bound_ms", a.latency_bound)):
        if value is not None:
            policy = replace(policy, **{field: value})
    rolled: list[dict] = []
    lock = threading.Lock()

    def on_event(ev):
        if isinstance(ev, SessionRolled):
            with lock:
                rolled.append({"at_audio_s": round(ev.at_audio_s, 2), "reason": ev.reason})

    settings = InProcessSettings(a.model, dummy_weights=a.dummy_weights, graph_mode=a.graph_mode,
                              max_streams=2).validated()
    engine = build_engine(settings, on_event=on_event, rollover=policy)
    t0 = time.perf_counter()
    engine.start()
    engine.wait_ready()
    startup = time.perf_counter() - t0
    steps: list[tuple[float, float]] = []  # (audio position s, latency ms)

    def observe(_sid, ms):
        steps.append((len(steps) * STEP_S, ms))

    engine.stats.latency_observer = observe
    audio = with_sentence_pauses(speech_like(a.minutes * 60.0, seed=7))
    sid = engine.open_stream("long")
    chunk = 5120  # 0.32 s
    t = time.perf_counter()
    pushed = 0
    while pushed < audio.size:
        if pushed / SAMPLE_RATE - len(steps) * STEP_S > a.lead:
            time.sleep(0.002)
            continue
        engine.push_audio(sid, audio[pushed:pushed + chunk])
        pushed += chunk
    engine.close_stream(sid)
    engine.wait_stream(sid, timeout=3600)
    wall = time.perf_counter() - t
    engine.stats.latency_observer = None
    engine.shutdown()

    rows = []
    lat = np.array([ms for _, ms in steps])
    pos = np.array([p for p, _ in steps])
    for m in range(int(np.ceil(a.minutes))):
        sel = lat[(pos >= m * 60) & (pos < (m + 1) * 60)]
        if sel.size:
            rows.append({"minute": m + 1, "steps": int(sel.size),
                         "p50_ms": percentile(sel, 50, digits=2),
                         "p95_ms": percentile(sel, 95, digits=2),
                         "rollovers": sum(1 for r in rolled if m * 60 <= r["at_audio_s"] < (m + 1) * 60)})
    first = rows[0]["p95_ms"] if rows else None
    worst = max(rows, key=lambda r: r["p95_ms"]) if rows else None
    report = {"policy": asdict(policy), "minutes": a.minutes, "startup_s": round(startup, 1),
              "wall_s": round(wall, 1), "steps": len(steps), "rollovers": rolled, "per_minute": rows,
              "worst_p95_vs_first": round(worst["p95_ms"] / first, 3) if rows and first else None}
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=2))
    print(f"policy: soft {policy.soft_s} s, hard {policy.hard_s} s, latency bound "
          f"{policy.latency_bound_ms} ms; {a.minutes} min of audio in {wall:.0f} s, "
          f"{len(steps)} steps, {len(rolled)} rollovers ({', '.join(r['reason'] for r in rolled)})")
    print(f"{'minute':>6}{'steps':>7}{'p50 ms':>8}{'p95 ms':>8}{'rolls':>6}")
    for r in rows:
        print(f"{r['minute']:>6}{r['steps']:>7}{r['p50_ms']:>8}{r['p95_ms']:>8}{r['rollovers']:>6}")
    if worst:
        print(f"worst minute p95 {worst['p95_ms']} ms (minute {worst['minute']}) = "
              f"{report['worst_p95_vs_first']}x the first minute's {first} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
