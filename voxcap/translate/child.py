"""The translation process: translates for the app's ``process.TranslationProcess``, nothing else.

Its own process, not a thread of the app: the app's caption path (the engine's client, the
displays) shares no interpreter lock, no lock and no allocator with it. The whole process, its
model's threads included, runs only on CPU time nothing else wants (``lower_priority``), so on a
busy CPU the captions go first. A thread of the app lowered in priority could hold the
interpreter lock while the scheduler keeps it waiting, and then the captions would wait with it.

Requests come as JSON lines on stdin, one at a time; each answer is one JSON line:

    {"id": 1, "pairs": ["/models/fr_en", "/models/en_de"], "texts": ["Bonjour."],
     "threads": 1, "length_ratio": null}
    -> {"id": 1, "texts": ["Hallo."]}   or   {"id": 1, "error": "...", "fix": "..."}

Each pair's model is loaded on its first request and kept (a request with no texts only
loads; with ``"only": true`` the models of pairs not in it are dropped first: a model removed
or no longer wanted frees its memory). It ends when stdin closes, and is killed by the kernel
when the thread of the app that started it ends (``PR_SET_PDEATHSIG``, set by the boot line
before this module is imported).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

NICE = 10  # where SCHED_IDLE is refused: below the app's threads, which keep their own

log = logging.getLogger("voxcap.translate.child")


def lower_priority() -> None:
    """This process, and the threads its model starts (they inherit it), only on CPU time that
    nothing else of the app wants (SCHED_IDLE: a caption thread waking up takes the core at
    once); else, where that policy is refused, ``NICE`` below it (a nicer thread can still keep
    a waking one waiting for a time slice)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return
    except (AttributeError, OSError) as exc:
        log.info("translation cannot use SCHED_IDLE (%s): nice +%d", exc, NICE)
    try:
        os.nice(NICE)
    except OSError as exc:
        log.info("translation keeps the app's priority (%s)", exc)


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # a library that prints cannot break the answers
    lower_priority()
    from ..setting_refs import ref
    from .package import PairTranslator, TranslationModelError, read_package

    loaded: dict[tuple[str, int, float | None], PairTranslator] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        folder = ""
        try:
            texts = list(request["texts"])
            if request.get("only"):
                for key in [k for k in loaded if k[0] not in request["pairs"]]:
                    del loaded[key]
                    log.info("dropped %s", key[0])
            for folder in request["pairs"]:
                key = (folder, int(request.get("threads") or 1), request.get("length_ratio"))
                if key not in loaded:
                    started = time.monotonic()
                    loaded[key] = PairTranslator(read_package(Path(folder)), threads=key[1],
                                                 length_ratio=key[2])
                    log.info("loaded %s in %.2f s", folder, time.monotonic() - started)
                texts = loaded[key].translate(texts)
            answer: dict = {"id": request["id"], "texts": texts}
        except TranslationModelError as exc:
            answer = {"id": request["id"], "error": exc.message, "fix": exc.fix}
        except Exception as exc:  # said to the app, which logs it; the next request goes on
            log.exception("translating with %s failed", folder)
            answer = {"id": request["id"], "error": f"Translation failed ({exc!r}).",
                      "fix": ref("models_reinstall", Path(folder).name.replace("_", "-"))}
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return 0
