"""Journal cost and crash loss, measured (not a test): prints the figures issue 4 asks for.

    .venv/bin/python -m benchmarks.journal_bench [--dir DIR] [--seconds 10] [--kills 10]

1. Cost per delta of ``Journal.append`` (JSON encode + one unbuffered write), wall and CPU
   time, on the file system of ``--dir`` (default: a temporary folder under the data dir's
   parent, i.e. the disk sessions are written to); also ``CaptionAssembler.feed`` for scale.
2. Share of one core at 2 live streams (2 x 12.5 deltas/s): computed from (1), and measured
   as the process's CPU time (all threads, including the fsync thread) over a paced run.
3. Loss on ``kill -9``: a child process journals 2 streams and prints each delta's id once
   ``append`` returned; it is SIGKILLed at a random moment; every printed delta must be in
   the file. Repeated ``--kills`` times, flat out and at the live rate.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from voxcap import paths
from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.journal import Journal
from voxcap.captions.sessions import read_session_dir
from voxcap.events import TextDelta
from voxcap.framing import STEP_SECONDS as STEP_S
from voxcap.framing import TOKENS_PER_SECOND

RATE_PER_STREAM = TOKENS_PER_SECOND  # deltas a second of one live stream


def realistic_deltas(n: int, streams=("mic", "sys"), seed: int = 0) -> list[TextDelta]:
    """Like live speech: ~45% of steps carry a subword piece, the rest are empty."""
    rng = random.Random(seed)
    vocab = [" the", " caption", "s", " are", " read", "able", ",", " now", ".", " وقت", " 日本"]
    out, now = [], time.time()
    for k in range(n):
        sid = streams[k % len(streams)]
        i = k // len(streams)
        text = rng.choice(vocab) if rng.random() < 0.45 else ""
        out.append(TextDelta(sid, text, (rng.randrange(1000, 131072),), i, i * STEP_S,
                             (i + 1) * STEP_S, now + i * STEP_S))
    return out


def bench_cost(root: Path, n: int = 20000) -> dict:
    deltas = realistic_deltas(n)
    j = Journal.create({"bench": True}, kind="bench", root=root)
    for sid in ("mic", "sys"):
        j.stream_opened(sid, label=sid)
    per_call = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for d in deltas:
        t = time.perf_counter_ns()
        j.append(d)
        per_call.append(time.perf_counter_ns() - t)
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    j.close()
    size = j.path.stat().st_size
    asm = CaptionAssembler()
    t = time.perf_counter()
    for d in deltas:
        asm.feed(d)
    asm_us = (time.perf_counter() - t) / n * 1e6
    per_call.sort()
    return {"n": n, "wall_us": wall / n * 1e6, "cpu_us": cpu / n * 1e6,
            "p50_us": per_call[n // 2] / 1000, "p99_us": per_call[int(n * 0.99)] / 1000,
            "max_us": per_call[-1] / 1000, "bytes_per_delta": size / n, "asm_us": asm_us}


def _paced(deltas, append) -> tuple[float, float]:
    interval = 1 / (2 * RATE_PER_STREAM)
    cpu0, t0 = time.process_time(), time.perf_counter()
    for k, d in enumerate(deltas):
        delay = t0 + k * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        append(d)
    return time.perf_counter() - t0, time.process_time() - cpu0


def bench_paced(root: Path, seconds: float) -> dict:
    """2 streams at the live rate for ``seconds``: CPU of the whole process (fsync thread
    included), minus the same paced loop without the journal."""
    n = int(seconds * RATE_PER_STREAM) * 2
    deltas = realistic_deltas(n, seed=1)
    base_wall, base_cpu = _paced(deltas, lambda d: None)
    j = Journal.create({"bench": True}, kind="bench", root=root)
    fsyncs = []
    wall, cpu = _paced(deltas, j.append)
    j.close()
    fd = os.open(j.path, os.O_WRONLY | os.O_APPEND)  # what one fsync costs on this disk
    for _ in range(5):
        os.write(fd, b"\n")
        t = time.perf_counter()
        os.fsync(fd)
        fsyncs.append((time.perf_counter() - t) * 1000)
    os.close(fd)
    return {"seconds": wall, "deltas": n, "core_share_pct": cpu / wall * 100,
            "base_share_pct": base_cpu / base_wall * 100, "fsync_ms": statistics.median(fsyncs)}


CHILD = r"""
import sys, time
from voxcap.captions.journal import Journal
from voxcap.events import TextDelta
from voxcap.framing import STEP_SECONDS as STEP_S
root, sid, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = Journal.create({}, kind="bench", root=root, session_id=sid)
t0 = time.perf_counter()
k = 0
while True:
    for s in ("mic", "sys"):
        d = TextDelta(s, " word" if k % 2 else "", (k,), k, k * STEP_S, (k + 1) * STEP_S, time.time())
        if j.append(d):
            sys.stdout.write(f"{s} {k}\n")
            sys.stdout.flush()
    k += 1
    if rate > 0:
        delay = t0 + k / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
"""


def bench_kill(root: Path, kills: int, rate: float) -> dict:
    lost = extra = total = 0
    rng = random.Random(5)
    for n in range(kills):
        sid = f"kill-{rate:g}-{n}"
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), sid, str(rate)],
                                stdout=subprocess.PIPE, text=True)
        reported = set()
        deadline = time.perf_counter() + (rng.uniform(0.5, 1.5) if rate > 0 else 0)
        for line in proc.stdout:
            reported.add(tuple(line.split()))
            if time.perf_counter() >= deadline and (rate > 0 or len(reported) > 2000):
                os.kill(proc.pid, signal.SIGKILL)
                break
        reported |= {tuple(line.split()) for line in proc.stdout}
        proc.wait()
        session = read_session_dir(root / sid)
        in_file = {(r.stream_id, str(r.index)) for r in session.records}
        lost += len(reported - in_file)
        extra += len(in_file - reported)
        total += len(reported)
    return {"kills": kills, "reported": total, "lost": lost, "unreported_in_file": extra}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="where to write (default: next to the data dir)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--kills", type=int, default=10)
    args = ap.parse_args()
    base = Path(args.dir) if args.dir else paths.data_dir().parent
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="voxcap-journal-bench-", dir=base) as tmp:
        root = Path(tmp)
        c = bench_cost(root)
        print(f"file system: {root}")
        print(f"append per delta: {c['wall_us']:.1f} us wall, {c['cpu_us']:.1f} us CPU "
              f"(p50 {c['p50_us']:.1f} us, p99 {c['p99_us']:.1f} us, max {c['max_us']:.0f} us; "
              f"{c['n']} deltas, {c['bytes_per_delta']:.0f} bytes each)")
        print(f"  for scale: CaptionAssembler.feed {c['asm_us']:.1f} us per delta")
        computed = 2 * RATE_PER_STREAM * c["cpu_us"] / 1e6 * 100
        print(f"2 streams (25 deltas/s), computed: {computed:.3f}% of one core")
        p = bench_paced(root, args.seconds)
        print(f"2 streams, measured over {p['seconds']:.1f} s ({p['deltas']} deltas, fsync "
              f"every 2 s, one fsync {p['fsync_ms']:.2f} ms): "
              f"{p['core_share_pct'] - p['base_share_pct']:.3f}% of one core for the journal "
              f"({p['core_share_pct']:.3f}% with the pacing loop, {p['base_share_pct']:.3f}% "
              f"without the journal)")
        for rate, name in ((0.0, "flat out"), (RATE_PER_STREAM, "live rate")):
            k = bench_kill(root, args.kills, rate)
            print(f"kill -9 ({name}, {k['kills']} kills): {k['lost']} of {k['reported']} "
                  f"deltas reported written were lost; {k['unreported_in_file']} more were in "
                  f"the file (written, killed before reporting)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
