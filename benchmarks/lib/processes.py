"""Child processes of the benchmarks: a benchmark module run again as a child (a fresh process
per measured start, engine or CUDA context), and a server's whole process tree stopped however
the benchmark ends."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]  # the repository: children run from here
log = logging.getLogger(__name__)


def module_command(module: str, *args: str) -> list[str]:
    """The command that runs ``module`` (e.g. "benchmarks.step_growth") with this Python."""
    return [sys.executable, "-m", module, *args]


def run_module(module: str, *args: str, env: dict[str, str] | None = None,
               timeout: float | None = None) -> subprocess.CompletedProcess:
    """``module`` run to its end in a child process from the repository root, its output
    captured as text."""
    return subprocess.run(module_command(module, *args), env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def tree(pid: int) -> list[psutil.Process]:
    """The process and every descendant of it alive now (empty when it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def stop_tree(proc: subprocess.Popen, name: str, seen: list[psutil.Process] = (),
              grace_s: float = 20.0) -> None:
    """SIGINT to ``proc`` (a clean stop), then SIGKILL to its process group (started with
    ``start_new_session``) and to every descendant ever ``seen`` or alive now: a server's
    engine processes must not outlive the benchmark."""
    everyone = list(seen) + tree(proc.pid)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %.0f s: killing it", name, grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for p in everyone:
        with contextlib.suppress(psutil.Error):
            if p.is_running():
                p.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
