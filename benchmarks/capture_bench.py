"""Capture figures on this machine, against a private headless PulseAudio (tests/support/pulse.py):

1. latency, sample played -> block delivered: a click is written to the virtual speaker through
   PortAudio, whose output callback says when that sample reaches the speaker (its DAC time);
   the capture of the speaker's monitor finds the click in a delivered block. p50/p95 over the
   clicks (4 a second). It includes the sound server's own buffering, as a user hears it.
2. CPU cost of the capture path (PortAudio callback, ALSA pulse plugin, conversion, watchdog):
   this process's CPU time over --cpu-seconds of capturing, as percent of one core; for one
   source and for both at once. The speech is played by paplay, another process.
3. recovery: device unplugged -> reported; replugged -> captured from again; sound server killed
   -> reported; restarted -> audio again. Medians and maxima over --repeats.

    .venv/bin/python -m benchmarks.capture_bench [--cpu-seconds 60] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

from tests.support.capture_helpers import Recorder
from tests.support.pulse import PulseServer, speech_wav
from voxcap.capture import Capture
from voxcap.events import CaptureDeviceChanged, CaptureInterrupted, CaptureRecovered
from voxcap.framing import SAMPLE_RATE

from .lib.percentiles import percentile


def pct(values, q):
    return percentile(values, q, empty=float("nan"))


# ----------------------------------------------------------------------------------- latency ----
def measure_latency(seconds: float) -> dict:
    import sounddevice as sd

    clicks: list[float] = []  # time.time() at which each click sample plays
    rate, period = 48000, 0.25
    state = {"n": 0, "next": int(rate * 0.5)}

    def out_cb(outdata, frames, t, status):
        outdata.fill(0)
        wall = time.time()
        start = state["n"]
        while state["next"] < start + frames:
            i = state["next"] - start
            outdata[i:i + 48, 0] = 0.8  # 1 ms pulse
            clicks.append(wall - (t.currentTime - t.outputBufferDacTime) + i / rate)
            state["next"] += int(rate * period)
        state["n"] += frames

    found: list[tuple[float, float]] = []  # (click time found in a block, delivery time)
    pos = {"samples": 0, "armed": True}

    def on_block(block):
        now = time.time()
        s = block.samples
        hits = np.flatnonzero(np.abs(s) > 0.3)
        if hits.size and pos["armed"]:
            found.append((block.captured_at + hits[0] / SAMPLE_RATE, now))
            pos["armed"] = False
        elif not hits.size:
            pos["armed"] = True

    cap = Capture("system", on_block).start()
    os.environ["PULSE_SINK"] = "vspeaker"
    try:
        out = sd.OutputStream(device="pulse", samplerate=rate, channels=1, dtype="float32",
                              blocksize=480, latency="low", callback=out_cb)
    finally:
        os.environ.pop("PULSE_SINK", None)
    with out:
        time.sleep(seconds)
    cap.stop()
    # pair each detection with the click it belongs to (the nearest click time before delivery)
    lat = []
    click_arr = np.array(clicks)
    for _stamp, delivered in found:
        before = click_arr[click_arr <= delivered]
        if before.size:
            lat.append(delivered - before[-1])
    return {"clicks": len(lat), "latency_p50_ms": pct(lat, 50) * 1000,
            "latency_p95_ms": pct(lat, 95) * 1000, "latency_max_ms": max(lat) * 1000 if lat else None}


# --------------------------------------------------------------------------------------- CPU ----
def measure_cpu(pulse: PulseServer, sources: list[str], seconds: float, wav: Path) -> dict:
    recs = [Recorder() for _ in sources]
    caps = [Capture(s, r.on_block, r.on_event).start() for s, r in zip(sources, recs, strict=True)]
    stop = threading.Event()

    def player():
        while not stop.is_set():
            p = pulse.play(wav, sink="vspeaker", wait=False)
            q = pulse.play(wav, sink="micfeed", wait=False)
            p.wait(), q.wait()

    th = threading.Thread(target=player, daemon=True)
    time.sleep(1.0)
    th.start()
    c0, w0 = time.process_time(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = time.process_time(), time.monotonic()
    stop.set()
    stats = [c.stop() for c in caps]
    th.join(30)
    return {"sources": sources, "seconds": round(w1 - w0, 1),
            "cpu_percent_of_one_core": round(100 * (c1 - c0) / (w1 - w0), 2),
            "dropped_blocks": sum(s.dropped_blocks for s in stats),
            "gap_seconds": round(sum(s.gap_seconds for s in stats), 3),
            "overflows": sum(s.overflows for s in stats)}


# ---------------------------------------------------------------------------------- recovery ----
def _first_block_after(rec: Recorder, mark: int, timeout: float = 10.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with rec._lock:
            if len(rec.blocks) > mark:
                return rec.block_times[mark]
        time.sleep(0.005)
    return float("nan")


def measure_recovery(pulse: PulseServer, repeats: int) -> dict:
    lost_s, back_s, down_s, up_s, up_audio_s = [], [], [], [], []
    for _ in range(repeats):
        pulse.reset()
        rec = Recorder()
        cap = Capture("Monitor of Virtual Speaker", rec.on_block, rec.on_event).start()
        rec.wait_audio(0.3)
        t = time.monotonic()
        pulse.unload_sink("vspeaker")
        rec.wait_event(CaptureDeviceChanged, reason="lost")
        lost_s.append(time.monotonic() - t)
        time.sleep(0.3)
        t = time.monotonic()
        pulse.load_sink("vspeaker")
        rec.wait_event(CaptureDeviceChanged, reason="returned")
        back_s.append(time.monotonic() - t)
        if len(rec.events) != 3:  # started, lost, returned: anything else is worth seeing
            print("events:", [getattr(e, "message", e) for e in rec.events], file=sys.stderr)
        cap.stop()

        rec = Recorder()
        cap = Capture("system", rec.on_block, rec.on_event).start()
        rec.wait_audio(0.3)
        t = time.monotonic()
        pulse.kill()
        rec.wait_event(CaptureInterrupted)
        down_s.append(time.monotonic() - t)
        time.sleep(0.5)
        mark = rec.mark()
        t = time.monotonic()
        t_wall = time.time()
        pulse.restart()
        rec.wait_event(CaptureRecovered)
        up_s.append(time.monotonic() - t)
        up_audio_s.append(_first_block_after(rec, mark) - t_wall)
        cap.stop()
    def med(v):
        return round(statistics.median(v), 3)

    return {"repeats": repeats,
            "device_unplugged_to_reported_s": [med(lost_s), round(max(lost_s), 3)],
            "device_replugged_to_capturing_it_s": [med(back_s), round(max(back_s), 3)],
            "server_killed_to_reported_s": [med(down_s), round(max(down_s), 3)],
            "server_restarted_to_recovered_s": [med(up_s), round(max(up_s), 3)],
            "server_restarted_to_first_block_s": [med(up_audio_s), round(max(up_audio_s), 3)]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-seconds", type=float, default=20.0)
    ap.add_argument("--cpu-seconds", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = {}
    with PulseServer() as pulse:
        wav = speech_wav(pulse.root / "speech.wav",
                         "This is a long sentence of speech that keeps playing while the capture "
                         "path is measured, over and over again, for a whole minute.")
        results["latency"] = measure_latency(args.latency_seconds)
        pulse.reset()
        results["cpu_one_source"] = measure_cpu(pulse, ["system"], args.cpu_seconds, wav)
        results["cpu_both"] = measure_cpu(pulse, ["system", "mic"], args.cpu_seconds, wav)
        results["recovery"] = measure_recovery(pulse, args.repeats)
    results["block_ms"] = 20
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    lat, rec = results["latency"], results["recovery"]
    print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print("block size 20 ms (960 frames at 48 kHz -> ~320 samples at 16 kHz)")
    print(f"latency, click played -> block delivered ({lat['clicks']} clicks): "
          f"p50 {lat['latency_p50_ms']:.1f} ms, p95 {lat['latency_p95_ms']:.1f} ms, "
          f"max {lat['latency_max_ms']:.1f} ms")
    for key in ("cpu_one_source", "cpu_both"):
        c = results[key]
        print(f"CPU, {'+'.join(c['sources'])} for {c['seconds']:.0f} s: "
              f"{c['cpu_percent_of_one_core']:.2f}% of one core "
              f"(dropped {c['dropped_blocks']}, gaps {c['gap_seconds']} s, overflows {c['overflows']})")
    for k, v in rec.items():
        if k != "repeats":
            print(f"{k.replace('_', ' ')}: median {v[0]:.3f} s, max {v[1]:.3f} s "
                  f"({rec['repeats']} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
