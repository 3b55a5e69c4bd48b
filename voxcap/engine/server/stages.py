"""vLLM's start-up stages on ``voxcap serve``'s terminal while its server starts, from the same log
records the app shows them from (inprocess/progress.py), written by every process of the server.

    stages = ServerStages(new_workdir(), sys.stdout)
    env = stages.env()          # for the server's processes: the stage file and logging config
    stages.start()              # prints "importing", then each stage vLLM's processes reach
    ...                         # the server answers /health
    stages.ready()              # stops watching, prints "ready" with the time it took

A stage that lasts prints "still <stage>" every ``still_every_s``, so a long compile never looks
like a hang. The server's log keeps vLLM's lines in a format close to vLLM's own.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TextIO

from ... import paths
from ..inprocess.progress import STAGE_ENV, StageTail, write_logging_config

# <tmp>/voxcap-serve-stages-<pid>-<random>: the pid says whether its run still lives
WORKDIR_PREFIX = "voxcap-serve-stages-"
LOG_FORMAT = "(pid=%(process)d) %(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"
IMPORTING = "importing vLLM and PyTorch"
log = logging.getLogger(__name__)


def new_workdir() -> Path:
    """A folder for the stage file and the logging config of this run; those of runs that were
    killed (their pid gone) are removed first."""
    return paths.run_tempdir(WORKDIR_PREFIX)


class ServerStages:
    def __init__(self, workdir: Path, out: TextIO, still_every_s: float = 30.0,
                 interval_s: float = 0.2) -> None:
        self._out, self._still_every_s, self._interval_s = out, still_every_s, interval_s
        self.stage_file = Path(workdir) / "stages.jsonl"
        self.stage_file.touch()
        level = os.environ.get("VLLM_LOGGING_LEVEL", "INFO").upper()  # as vLLM's own config
        self._config = write_logging_config(Path(workdir) / "logging.json", level, LOG_FORMAT)
        self._tail = StageTail(self.stage_file, self._reached, interval_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="voxcap-serve-stages", daemon=True)
        self._t0 = self._said_at = time.monotonic()
        self._stage = ""
        self._lock = threading.Lock()

    def env(self) -> dict[str, str]:
        """What the server's processes need to report their stages (vLLM reads both in each)."""
        return {STAGE_ENV: str(self.stage_file), "VLLM_LOGGING_CONFIG_PATH": str(self._config)}

    @property
    def errors(self) -> list[str]:
        return self._tail.errors

    def start(self) -> ServerStages:
        self._t0 = time.monotonic()
        self._reached(IMPORTING)  # the server's first seconds: its imports, before any record
        self._thread.start()
        return self

    def ready(self) -> float:
        """Stop watching and say ready; returns the seconds the start took."""
        self.stop()
        seconds = time.monotonic() - self._t0
        self._say("ready")
        return seconds

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout=5)
        self._tail.poll()  # the last records written before the server answered

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._tail.poll()
            with self._lock:
                quiet_s = time.monotonic() - self._said_at
            if quiet_s >= self._still_every_s:
                self._say(f"still {self._stage}…")

    def _reached(self, stage: str, detail: str = "") -> None:
        with self._lock:
            self._stage = stage
        self._say(f"{stage}…")

    def _say(self, text: str) -> None:
        with self._lock:
            self._said_at = time.monotonic()
            elapsed = self._said_at - self._t0
        self._out.write(f"  {elapsed:4.0f} s  {text}\n")
        self._out.flush()
