"""N viewers of a caption feed in one process (a thread each), for the share tests and the
benchmark: ``python sse_clients.py URL N LAST_WORD``. Each follows the Server-Sent Events
(snapshot, then line updates) until a final line ends with LAST_WORD, then prints one JSON
object per viewer: the words it ended up with, in the order they arrived (lines as the snapshot
lists them, then each new line where it came: never sorted, so a reordered feed shows), whether
each message's ``seq`` was above the one before, and how many snapshots it got."""

from __future__ import annotations

import json
import sys
import threading
import urllib.request


def follow(url: str, last_word: str) -> dict:
    lines: dict[int, str] = {}  # line id -> text; a dict keeps the order the ids arrived in
    snapshots = 0
    seq, seq_ok = -1, True
    with urllib.request.urlopen(url, timeout=120) as r:
        for raw in r:
            if not raw.startswith(b"data: "):
                continue
            msg = json.loads(raw[6:])
            if "seq" in msg:  # a snapshot repeats the current seq; every other message is new
                seq_ok &= msg["seq"] >= seq if msg["type"] == "snapshot" else msg["seq"] > seq
                seq = msg["seq"]
            if msg["type"] == "snapshot":
                snapshots += 1
                lines = {ln["id"]: ln["text"] for ln in msg["lines"]}
            elif msg["type"] == "line":
                lines[msg["id"]] = msg["text"]
                if msg["final"] and msg["text"].endswith(last_word):
                    break
    words = " ".join(lines.values()).split()  # as they arrived
    return {"words": words, "snapshots": snapshots, "seq_ok": seq_ok,
            "ids_rise": list(lines) == sorted(lines)}


def main() -> None:
    url, n, last = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    results: list = [None] * n

    def run(i: int) -> None:
        try:
            results[i] = follow(url, last)
        except Exception as exc:  # noqa: BLE001 - reported to the test
            results[i] = {"error": repr(exc)}
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
