"""How long the engine took to start last time, per engine set-up, so a long start can say
what it is expected to take ("compiling… 27 s; the last start took 95 s"). No Qt here.

    times = StartTimes()                         # <cache dir>/engine-start-times.json
    times.expected(key)                          # seconds, or None never started so
    times.record(key, 95.2)                      # after EngineReady

``key`` is any repr-able description of the set-up (``AppSettings.engine_key()``): a CUDA-graph
start and an eager one take very different times. A missing or damaged file is no error (no
estimate); one that cannot be written is logged and ignored.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..paths import cache_dir

log = logging.getLogger(__name__)
FILE_NAME = "engine-start-times.json"
MAX_KEYS = 20


class StartTimes:
    def __init__(self, path: str | Path | None = None, persist: bool = True) -> None:
        self.path = Path(path) if path is not None else cache_dir() / FILE_NAME
        self.persist = persist  # False: remembered in memory only (tests, --no-save)
        self._memory: dict = {}

    def _load(self) -> dict:
        if not self.persist:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            log.warning("ignoring unreadable %s", self.path, exc_info=True)
            return {}
        return data if isinstance(data, dict) else {}

    def expected(self, key) -> float | None:
        value = self._load().get(repr(key))
        return float(value) if isinstance(value, (int, float)) and value > 0 else None

    def record(self, key, seconds: float) -> None:
        data = self._load()
        data.pop(repr(key), None)
        data[repr(key)] = round(seconds, 1)
        data = dict(list(data.items())[-MAX_KEYS:])
        if not self.persist:
            self._memory = data
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(data, indent=1), encoding="utf-8")
        except OSError:
            log.warning("cannot save the engine start time to %s", self.path, exc_info=True)
