"""How long a search across a day of captions takes (captions/search.py).

    python -m benchmarks.search_bench [--hours 8] [--sessions 6]

Writes a day of journals into a temporary folder with the journal's own writer: ``--hours``
of two streams (Them and You, as "Both" captions a call), one step every 80 ms each, a word
piece in one step of three (about 150 words a minute per speaker, the rest empty steps as the
engine sends them), split into ``--sessions`` sessions; then searches them for a word that
occurs a few times, and for one that occurs nowhere, and prints the time of each.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

from voxcap.captions.journal import Journal
from voxcap.captions.search import search_sessions
from voxcap.events import TextDelta
from voxcap.framing import STEP_SECONDS

WORDS = ("the quarterly report shows strong growth in every region and the board is pleased "
         "could you please repeat the last number I did not hear it clearly over the noise").split()


def write_day(root, hours: float, sessions: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    steps = int(hours * 3600 / STEP_SECONDS / sessions)
    lines = 0
    for n in range(sessions):
        journal = Journal.create({"model": "bench"}, root=root, session_id=f"bench-{n:02d}")
        for sid, label in (("s-them", "Them"), ("s-you", "You")):
            journal.stream_opened(sid, label=label)
        for i in range(steps):
            for sid in ("s-them", "s-you"):
                text = " " + rng.choice(WORDS) if rng.random() < 1 / 3 else ""
                if n == sessions - 1 and i == steps // 2 and sid == "s-you":
                    text = " zanzibar"  # the word searched for, said once
                journal.append(TextDelta(sid, text, (1,) if text else (), i, i * STEP_SECONDS,
                                         (i + 1) * STEP_SECONDS, time.time()))
                lines += 1
        journal.close()
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=8.0)
    ap.add_argument("--sessions", type=int, default=6)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="voxcap-search-bench-") as root:
        t0 = time.perf_counter()
        lines = write_day(root, args.hours, args.sessions)
        print(f"wrote {lines:,} deltas in {args.sessions} sessions "
              f"({args.hours:g} h, 2 streams) in {time.perf_counter() - t0:.1f} s")
        for word in ("zanzibar", "quarterly report", "nowhere-said"):
            t0 = time.perf_counter()
            hits = search_sessions(word, root, limit=10**9)
            print(f"search {word!r}: {len(hits)} hits in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
