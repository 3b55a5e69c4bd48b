"""Start-up progress from vLLM's own log records, in every vLLM process.

vLLM loads weights, compiles and captures graphs in its engine-core child process, where the
app has no hook. vLLM configures logging in each process from VLLM_LOGGING_CONFIG_PATH, so a
logging config naming ``StageFileHandler`` makes every process append the start-up stages it
reaches to one file, which the app tails while the engine starts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

# (stage, pattern on the log message); first match wins. Checked against vLLM 0.32's messages.
STAGE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (stage, re.compile(p, re.I)) for stage, p in (
        ("loading weights", r"^starting to load model|^loading weights|^loading model"),
        ("compiling", r"^warming up model for the compilation|^compil|^dynamo bytecode|"
                      r"^torch\.compile|^compile and warming"),
        ("capturing graphs", r"^captur\w* (cuda ?)?graph|^profiling cuda graph memory|"
                             r"^graph capturing"),
        ("allocating cache", r"kv cache size|^init engine|^using \w+ kv cache layout|"
                             r"maximum concurrency|explicitly set .* for kv cache"),
    )
)
STAGE_ENV = "VOXCAP_STAGE_FILE"


_PREFIX = re.compile(r"^(\[[^\]]*\]\s*)+")  # vLLM prefixes some messages with "[backbone] "


def stage_of(message: str) -> str | None:
    message = _PREFIX.sub("", message.lstrip())
    for stage, pattern in STAGE_PATTERNS:
        if pattern.search(message):
            return stage
    return None


class StageFileHandler(logging.Handler):
    """Appends one JSON line per start-up stage or error record to the file in $VOXCAP_STAGE_FILE."""

    def emit(self, record: logging.LogRecord) -> None:
        # read per record: a process configures logging once, but starts engines many times
        path = os.environ.get(STAGE_ENV)
        if not path:
            return
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 (a malformed record must never break vLLM)
            return
        stage = "error" if record.levelno >= logging.ERROR else stage_of(message)
        if stage is None:
            return
        detail = message.splitlines()[0] if message else ""
        if record.exc_info and record.exc_info[1] is not None:
            # the root cause ("ValueError: ...") says more than "EngineCore failed to start."
            exc = record.exc_info[1]
            detail = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        line = json.dumps({"stage": stage, "detail": detail[:400],
                           "t": time.time(), "pid": os.getpid()})
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass


def write_logging_config(path: Path, console_level: str,
                         console_format: str = "%(levelname)s %(name)s: %(message)s") -> Path:
    """A vLLM logging config: console at ``console_level`` plus the stage file handler."""
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": console_format, "datefmt": "%m-%d %H:%M:%S"}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "plain",
                        "level": console_level, "stream": "ext://sys.stderr"},
            "stages": {"()": "voxcap.engine.inprocess.progress.StageFileHandler", "level": "INFO"},
        },
        "loggers": {"vllm": {"handlers": ["console", "stages"], "level": "INFO",
                             "propagate": False}},
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class StageTail:
    """Polls the stage file on a small thread and reports each new stage once, in order."""

    def __init__(self, path: Path, report: Callable[[str, str], None], interval: float = 0.2):
        self._path, self._report, self._interval = path, report, interval
        self._stop = threading.Event()
        self._offset = 0
        self._seen: set[str] = set()
        self.errors: list[str] = []
        self.lines: list[tuple[str, str]] = []  # every (stage, message) seen, for later parsing
        self._thread = threading.Thread(target=self._run, name="voxcap-stage-tail", daemon=True)

    def start(self) -> StageTail:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.poll()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.poll()

    def poll(self) -> None:
        try:
            with open(self._path, encoding="utf-8") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        complete, _, _ = chunk.rpartition("\n")
        if not complete:
            return
        self._offset += len(complete.encode("utf-8")) + 1
        for line in complete.splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            self.lines.append((rec["stage"], rec["detail"]))
            if rec["stage"] == "error":
                self.errors.append(rec["detail"])
            elif rec["stage"] not in self._seen:
                self._seen.add(rec["stage"])
                self._report(rec["stage"], rec["detail"])


_CONCURRENCY = re.compile(r"KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) "
                          r"tokens per request: ([\d.]+)x", re.I)


def kv_cache_capacity(lines) -> tuple[int, float] | None:
    """(tokens the KV cache holds, sessions of max length it fits) from vLLM's start-up log."""
    for _, detail in lines:
        if m := _CONCURRENCY.search(detail):
            return int(m.group(1).replace(",", "")), float(m.group(3))
    return None
