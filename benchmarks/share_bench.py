"""The caption server's figures: a text delta published -> the word shown in the browser, and
what each extra viewer costs the app.

    python -m benchmarks.share_bench [--words 120] [--viewers 0,10,20,40] [--json]

A ShareServer on 127.0.0.1 is fed the controller's event types (one stream, one delta per
80 ms step in real time, each word completed by the step after it, as the tiny model does); the
caption page runs in Debian's chromium (headless, Selenium) with ``?measure=1``, which records,
for every update, the time from the delta's ``produced_at`` to the frame that shows it
(requestAnimationFrame; same clock, same machine). With N extra viewers (programs following the
feed, in another process) it reports the latency again, and the server thread's CPU time and
the app's memory per viewer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import psutil

from tests.support.browser import caption_text, quit_chromium, start_chromium, wait_for
from tests.support.caption_script import Script
from voxcap.framing import STEP_SECONDS as STEP_S
from voxcap.share.server import ShareServer

from .lib.percentiles import percentile
from .lib.processes import ROOT

CLIENTS = ROOT / "tests" / "support" / "sse_clients.py"


def run(driver, n_viewers: int, words: int) -> dict:
    server = ShareServer(port=0, max_viewers=max(50, n_viewers + 5)).start()
    try:
        s = Script(server.post)
        driver.get(server.url + "?measure=1")
        wait_for(lambda: server.viewers == 1, what="the page")
        me = psutil.Process()
        rss0, cpu0 = me.memory_info().rss, server.cpu_seconds()
        clients = None
        last = f"w{words - 1}"
        if n_viewers:
            clients = subprocess.Popen([sys.executable, str(CLIENTS), server.local_url("/events"),
                                        str(n_viewers), last], stdout=subprocess.PIPE, text=True)
            wait_for(lambda: server.viewers == n_viewers + 1, what="the viewers")
        rss1, cpu1 = me.memory_info().rss, server.cpu_seconds()
        t0 = time.monotonic()
        for k in range(words):  # real time: one step every 80 ms
            s.words.append(f"w{k}")
            s.delta(f" w{k}")
            time.sleep(max(0.0, t0 + (2 * k + 1) * STEP_S - time.monotonic()))
            s.delta("")
            time.sleep(max(0.0, t0 + (2 * k + 2) * STEP_S - time.monotonic()))
        s.finish()
        if clients is not None:
            out, _ = clients.communicate(timeout=120)
            assert all(r.get("words") == s.words for r in json.loads(out)), "a viewer lost words"
        wait_for(lambda: caption_text(driver).split() == s.words, what="the page's words")
        cpu = server.cpu_seconds() - cpu1
        lat = [x for x in driver.execute_script("return window.voxcap.latency") if x >= 0]
        return {"viewers": n_viewers + 1, "updates": len(lat),
                "p50_ms": percentile(lat, 50, digits=1, method="higher", empty=float("nan")),
                "p95_ms": percentile(lat, 95, digits=1, method="higher", empty=float("nan")),
                "max_ms": round(max(lat), 1) if lat else None,
                "server_cpu_ms_per_s": round(1000 * cpu / (2 * words * STEP_S), 2),
                "connect_cpu_ms": round(1000 * (cpu1 - cpu0), 1),
                "rss_mib": round((rss1 - rss0) / 2**20, 2)}
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=120, help="words per run (2 steps each)")
    ap.add_argument("--viewers", default="0,10,20,40",
                    help="extra viewers (programs following the feed) per run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    driver = start_chromium()
    try:
        rows = [run(driver, int(n), args.words) for n in args.viewers.split(",")]
    finally:
        quit_chromium(driver)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"delta -> shown in chromium (requestAnimationFrame), {args.words} words in real time "
          f"(one 80 ms step each, plus the step that completes it)")
    print(f"{'viewers':>7} {'updates':>7} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} "
          f"{'server CPU ms/s':>15} {'RSS MiB':>8}")
    for r in rows:
        print(f"{r['viewers']:>7} {r['updates']:>7} {r['p50_ms']:>7} {r['p95_ms']:>7} "
              f"{r['max_ms']:>7} {r['server_cpu_ms_per_s']:>15} {r['rss_mib']:>8}")
    base, top = rows[0], rows[-1]
    extra = top["viewers"] - base["viewers"]
    if extra > 0:
        per_cpu = (top["server_cpu_ms_per_s"] - base["server_cpu_ms_per_s"]) / extra
        per_rss = (top["rss_mib"] - base["rss_mib"]) * 1024 / extra
        print(f"each extra viewer: {per_cpu:.3f} ms of server CPU per second of captions, "
              f"{per_rss:.0f} KiB of memory (from {base['viewers']} to {top['viewers']} viewers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
