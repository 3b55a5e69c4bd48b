"""GUI figures: CPU of the app process idle and while captioning two streams, and the time from a
delta leaving the engine to it being painted.

Runs the real app (``voxcap.gui.application.VoxcapApp``) on a private Xvfb (xcb platform: real X
painting) with real PulseAudio capture of the virtual speaker ("Them") and virtual microphone
("You") of a private server (``tests/support/pulse.py``), espeak-ng speech looping into both.

- ``--engine scripted`` (default): the deterministic scripted engine of the tests (one delta per
  80 ms of audio, as the real engine; no model cost), so the CPU figures are the app's own: Qt,
  overlay and history painting, caption assembly, capture, journal, meter.
- ``--engine tiny``: the real vLLM engine with the tiny self-check model (CPU build). Its engine
  core runs in a child process, reported separately; the in-process vLLM front end (asyncio loop,
  detokenising) then counts in the app process.

CPU: ``psutil`` process times (user + system) over ``--seconds`` of wall time, as percent of
one core; also the GUI thread alone (the main thread's own times). Idle = engine ready, window,
overlay and meter shown, not captioning. Delta -> painted: ``painted_at - TextDelta.produced_at``
for every overlay repaint caused by a delta (``VoxcapApp.paint_lag``; ``produced_at`` is the
wall time the token came back from vLLM or the scripted engine, ``painted_at`` the wall time at
the end of the overlay's paint handler). Caption lag (heard -> on screen, see
``voxcap/app/lag.py``) is printed too.

    .venv/bin/python -m benchmarks.gui_bench [--engine scripted|tiny] [--seconds 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import psutil

from .lib.percentiles import percentile


def main_thread_times(proc: psutil.Process) -> float:
    for t in proc.threads():
        if t.id == proc.pid:
            return t.user_time + t.system_time
    return 0.0


def measure(app, proc: psutil.Process, seconds: float, children=()) -> dict:
    c0, g0 = proc.cpu_times(), main_thread_times(proc)
    k0 = [c.cpu_times() for c in children]
    t0 = time.monotonic()
    from tests.support.xvfb import pump

    pump(app, seconds)
    wall = time.monotonic() - t0
    c1, g1 = proc.cpu_times(), main_thread_times(proc)
    out = {"process_pct": round(100 * ((c1.user + c1.system) - (c0.user + c0.system)) / wall, 1),
           "gui_thread_pct": round(100 * (g1 - g0) / wall, 1), "wall_s": round(wall, 1)}
    if children:
        k1 = [c.cpu_times() for c in children]
        used = sum((b.user + b.system) - (a.user + a.system) for a, b in zip(k0, k1, strict=True))
        out["engine_core_pct"] = round(100 * used / wall, 1)
    return out


def pct(values, q):
    return percentile(values, q, digits=1)


def main() -> int:
    ap = argparse.ArgumentParser(description="GUI CPU and delta -> painted latency")
    ap.add_argument("--engine", choices=("scripted", "tiny"), default="scripted")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from tests.support.gui_fakes import scripted_factory
    from tests.support.pulse import PulseServer
    from tests.support.xvfb import Xvfb, prepare_desktop_run, pump
    from voxcap.app.controller import SessionController, default_engine_factory
    from voxcap.app.settings import AppSettings
    from voxcap.engine.choice import EngineChoice

    tmp, model, them, you = prepare_desktop_run("voxcap-gui-bench-")
    proc = psutil.Process()
    with Xvfb(1600, 900), PulseServer(tmp / "pulse") as pulse:
        from PySide6.QtWidgets import QApplication

        from voxcap.gui.application import VoxcapApp

        app = QApplication(["voxcap"])
        factory = scripted_factory() if args.engine == "scripted" else default_engine_factory()
        settings = AppSettings(engine=EngineChoice(model_dir=str(model), dummy_weights=True,
                                                   enforce_eager=True, max_model_len=4096), source="both")
        vapp = VoxcapApp(settings, None, persist=False, use_tray=False, first_run=False,
                         controller_factory=lambda publish: SessionController(
                             publish, engine_factory=factory))
        vapp.start()
        if not pump(app, 900, lambda: vapp.window.engine_status.state in ("ready", "failed")):
            print("the engine did not start", file=sys.stderr)
            return 1
        children = proc.children(recursive=True) if args.engine == "tiny" else []
        pump(app, 3)
        idle = measure(app, proc, args.seconds, children)

        stop = threading.Event()

        def loop(wav, sink):
            while not stop.is_set():
                pulse.play(wav, sink)
        players = [threading.Thread(target=loop, args=(them, "vspeaker"), daemon=True),
                   threading.Thread(target=loop, args=(you, "micfeed"), daemon=True)]
        vapp.toggle_captioning()
        pump(app, 60, lambda: vapp.state == "on")
        for t in players:
            t.start()
        pump(app, 5)  # warm: both streams flowing
        start = time.time()
        busy = measure(app, proc, args.seconds, children)
        paint = [v * 1000 for v in vapp.paint_lag.values(time.time() - start)]
        lag = vapp.caption_lag.values(time.time() - start)
        streams = len(set(vapp.labels.values()))
        stop.set()
        vapp.quit()
        pump(app, 120, lambda: vapp.controller.closed.is_set())
        for t in players:
            t.join(30)
    result = {
        "engine": args.engine, "seconds": args.seconds, "streams": streams,
        "idle": idle, "captioning_two_streams": busy,
        "delta_to_painted_ms": {"n": len(paint), "p50": pct(paint, 50), "p95": pct(paint, 95),
                                "max": round(max(paint), 1) if paint else None},
        "caption_lag_s": {"n": len(lag), "p50": pct(lag, 50), "p95": pct(lag, 95)},
        "cpu_cores": psutil.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"engine: {args.engine}, {streams} streams, {args.seconds:g} s per phase, "
              f"{result['cpu_cores']} cores, load {result['load_avg_1m']}")
        for name, r in (("idle", idle), ("captioning 2 streams", busy)):
            extra = f", engine core child {r['engine_core_pct']} %" if "engine_core_pct" in r else ""
            print(f"  CPU {name}: process {r['process_pct']} % of one core, GUI thread "
                  f"{r['gui_thread_pct']} %{extra}")
        d = result["delta_to_painted_ms"]
        print(f"  delta -> painted: p50 {d['p50']} ms, p95 {d['p95']} ms, max {d['max']} ms "
              f"(n={d['n']})")
        c = result["caption_lag_s"]
        print(f"  caption lag (heard -> on screen): p50 {c['p50']} s, p95 {c['p95']} s")
    sys.stdout.flush()
    os._exit(0)  # PySide6 can crash in interpreter finalisation; all is closed by now


if __name__ == "__main__":
    sys.exit(main())
