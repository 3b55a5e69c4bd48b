"""The app's side of the translation process (``child``): start it, ask it, restart it, end it.

    proc = TranslationProcess()
    proc.start()                                     # ~0.1 s; before the first line needs it
    proc.translate([fr_en.folder], ["Bonjour."])     # ["Hello."]; blocks this thread only
    proc.close()

``translate`` is called from one thread at a time (the translation worker's); it waits for the
answer without the interpreter lock. The process dies with that thread (the kernel's
parent-death signal follows the thread that started it), so start it from the thread that asks.

It stays in the app's session: the kernel shares the CPU between sessions first (autogroups)
and applies priorities only within one, so a process of its own session would get as much CPU
as the app and its engine together, whatever its priority (measured: caption lag p95 0.5 s ->
8 s on two cores). A process group of its own keeps a terminal's Ctrl+C (the app's to handle)
from it.

A process that ends unasked (killed, out of memory, a crash in the model's library) is logged
and started again (a request in flight is asked once more), at most ``RESTARTS`` times; after
that every request raises ``TranslationStopped``, said once by the worker: the captions go on
untranslated.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from ..die_with_parent import BOOT_PREFIX
from ..errors import VoxcapError
from .package import TranslationModelError

log = logging.getLogger(__name__)

RESTARTS = 3  # ended processes replaced in one worker's life

# Runs in the child: the parent-death signal first (before any import), then the loop.
_BOOT = (BOOT_PREFIX
         + "sys.path.insert(0, sys.argv[2])\n"
         "from voxcap.translate.child import main\n"
         "sys.exit(main())\n")
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class TranslationStopped(VoxcapError):
    """The translation process ended more than ``RESTARTS`` times: no more translation."""


class TranslationProcess:
    def __init__(self, *, threads: int = 1, length_ratio: float | None = None) -> None:
        self.threads = threads
        self.length_ratio = length_ratio
        self.ended = 0  # processes that ended unasked
        self._proc: subprocess.Popen | None = None
        self._next_id = 0
        self._closed = False
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Start the process now if it is not running (else the first ``translate`` does)."""
        with self._lock:
            self._running()

    def translate(self, pairs: list[Path], texts: list[str]) -> list[str]:
        """``texts`` through each pair in turn. Raises ``TranslationModelError`` (a model that
        cannot be used), ``TranslationStopped`` (no process any more), ``ClosedError``."""
        return self._request(pairs, texts, only=False)

    def load(self, pairs: list[Path]) -> None:
        """The models loaded: these pairs' (the first line then waits for none) and no other
        (one removed or no longer used frees its memory); a model that cannot be loaded raises
        here and again when a line needs it."""
        self._request(pairs, [], only=True)

    def _request(self, pairs: list[Path], texts: list[str], only: bool) -> list[str]:
        with self._lock:
            answer = self._ask(pairs, texts, only)
            if answer is None:  # it ended mid-request: once more on a fresh one
                answer = self._ask(pairs, texts, only)
            if answer is None:
                raise self._stopped()
        if "error" in answer:
            raise TranslationModelError(answer["error"], answer.get("fix", ""))
        return list(answer["texts"])

    def close(self) -> None:
        """End the process now (it keeps nothing to save; a request in flight raises
        ``ClosedError`` in its thread)."""
        self._closed = True
        proc = self._proc
        if proc is not None:
            proc.kill()
            proc.wait()

    # ------------------------------------------------------------------------------------------
    def _ask(self, pairs: list[Path], texts: list[str], only: bool) -> dict | None:
        proc = self._running()
        self._next_id += 1
        request = {"id": self._next_id, "pairs": [str(p) for p in pairs], "texts": texts,
                   "threads": self.threads, "length_ratio": self.length_ratio, "only": only}
        try:
            _pipe(proc.stdin).write((json.dumps(request, ensure_ascii=False) + "\n").encode())
            _pipe(proc.stdin).flush()
            line = _pipe(proc.stdout).readline()
        except (OSError, ValueError):
            line = b""
        if self._closed:
            raise ClosedError("translation was stopped")
        if not line:
            self._ended(proc)
            return None
        return json.loads(line)

    def _running(self) -> subprocess.Popen:
        if self._closed:
            raise ClosedError("translation was stopped")
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._proc is not None:  # it ended between two requests
            self._ended(self._proc)
        if self.ended > RESTARTS:
            raise self._stopped()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(os.getpid()), _PACKAGE_ROOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            process_group=0)  # in the app's session, out of its terminal's signals
        threading.Thread(target=_log_lines, args=(self._proc,), daemon=True,
                         name="voxcap-translate-log").start()
        log.info("translation process started (pid %d)", self._proc.pid)
        return self._proc

    def _ended(self, proc: subprocess.Popen) -> None:
        """It ended unasked: logged and counted (its stdout closed: if not gone, it soon is)."""
        proc.kill()
        code = proc.wait()
        self._proc = None
        self.ended += 1
        log.warning("the translation process (pid %d) ended with %s; %s", proc.pid, code,
                    f"starting another ({self.ended} of {RESTARTS})" if self.ended <= RESTARTS
                    else "no more translation")

    def _stopped(self) -> TranslationStopped:
        return TranslationStopped(f"Translation stopped: its process ended {self.ended} times "
                                  "(the log says how).", "restart voxcap to translate again")


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    assert stream is not None  # every pipe of the process is opened
    return stream


class ClosedError(Exception):
    """``close`` was called while a request was in flight."""


def _log_lines(proc: subprocess.Popen) -> None:
    """What the process says on stderr (its warnings, a traceback), into the app's log."""
    for raw in _pipe(proc.stderr):
        text = raw.decode("utf-8", "replace").rstrip()
        if text:
            log.info("translation process %d: %s", proc.pid, text)
