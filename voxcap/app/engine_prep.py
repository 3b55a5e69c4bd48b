"""Prepare the engine for a model folder while its weights download: ``voxcap prepare --model``
as a child process of the app (engine/inprocess/prepare.py says why that makes the first start warm).

    prep = EnginePreparation(model_dir, engine_settings, on_done=print)   # on_done(state, message)
    prep.start()        # the child runs; the app goes on
    prep.wait(60)       # True once it ended (state: "done" or "failed")
    prep.cancel()       # kills it (and its engine: they die with it)

The child dies with the app however the app dies: its first act, before any import, is to ask
the kernel for SIGKILL when its parent goes (and to leave if that already happened); its own
engine core is tied to it the same way. Its output goes to a log file next to the app's.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from .. import logs
from ..die_with_parent import BOOT_PREFIX
from ..engine.settings import InProcessSettings

log = logging.getLogger(__name__)

# Runs in the child: PR_SET_PDEATHSIG first (a few ms after exec), then the command.
_CHILD = (BOOT_PREFIX
          + "from voxcap.cli import main\n"
          "sys.exit(main(sys.argv[2:]))\n")


class EnginePreparation:
    """One ``voxcap prepare --model DIR`` child. ``state``: "" (not started), "running", "done",
    "failed", "cancelled"; ``message``: what it said last (the reason, when it failed)."""

    def __init__(self, model_dir: str | Path, settings: InProcessSettings,
                 on_done: Callable[[str, str], None] | None = None,
                 log_path: Path | None = None) -> None:
        self.model_dir = str(model_dir)
        self.settings = settings
        self.on_done = on_done or (lambda state, message: None)
        self.log_path = log_path or logs.log_path().with_name("prepare.log")
        self.state = ""
        self.message = ""
        self._proc: subprocess.Popen | None = None
        self._ended = threading.Event()

    def command(self) -> list[str]:
        fields = {k: v for k, v in dataclasses.asdict(self.settings).items() if k != "model_dir"}
        return [sys.executable, "-c", _CHILD, str(os.getpid()), "prepare", "--model", self.model_dir,
                "--engine-settings", json.dumps(fields)]

    def start(self) -> EnginePreparation:
        """Call it from a thread that lives as long as the app (the GUI thread): the kernel's
        parent-death signal follows the thread that started the child, not the process."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(self.log_path, "wb")  # the child writes it; closed when it ends
        try:
            self._proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            out.close()
            log.warning("cannot start the engine's preparation", exc_info=True)
            self._end("failed", f"it could not be started: {exc}")
            return self
        self.state = "running"
        log.info("preparing the engine for %s (pid %d, log %s)", self.model_dir, self._proc.pid,
                 self.log_path)
        threading.Thread(target=self._watch, args=(self._proc, out), daemon=True,
                         name="voxcap-engine-prep").start()
        return self

    def _watch(self, proc: subprocess.Popen, out) -> None:
        code = proc.wait()
        out.close()
        if self.state == "cancelled":
            self._end("cancelled", "cancelled")
        elif code == 0:
            self._end("done", _last_line(self.log_path, "engine prepared"))
        else:
            error = _last_line(self.log_path, "error: ")
            fix = _last_line(self.log_path, "  fix: ")
            self._end("failed", (error.removeprefix("error: ") + (f" ({fix.strip()})" if fix else ""))
                      or f"it exited with {code} (see {self.log_path})")

    def _end(self, state: str, message: str) -> None:
        self.state, self.message = state, message
        if state == "failed":
            log.warning("the engine's preparation failed: %s (log: %s)", message, self.log_path)
        self._ended.set()
        try:
            self.on_done(state, message)
        except Exception:  # a listener's bug must not hide the result
            log.exception("the preparation's listener failed")

    @property
    def running(self) -> bool:
        return self.state == "running"

    def wait(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    def cancel(self) -> None:
        proc = self._proc
        if proc is not None and self.state == "running":
            self.state = "cancelled"
            proc.kill()  # its engine core goes with it (PR_SET_PDEATHSIG)


def _last_line(path: Path, start: str) -> str:
    """The last line the child wrote that starts with ``start`` (its result, error or fix)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        log.warning("cannot read %s", path, exc_info=True)
        return ""
    for line in reversed(lines):
        if line.startswith(start):
            return line.rstrip()[-300:]
    return ""
