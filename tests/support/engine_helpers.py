"""Helpers for tests that drive the real engine."""

from __future__ import annotations

import os
import queue
import time

from voxcap.events import StreamFinished, TextDelta


def collect_stream(events: queue.Queue, stream_id: str, timeout: float = 120.0):
    """Deltas of ``stream_id`` until its StreamFinished; returns (deltas, finished)."""
    return collect_streams(events, [stream_id], timeout)[stream_id]


def collect_streams(events: queue.Queue, stream_ids, timeout: float = 120.0):
    """Like collect_stream for several streams at once: {id: (deltas, finished)}."""
    pending = set(stream_ids)
    deltas = {sid: [] for sid in stream_ids}
    done = {}
    deadline = time.monotonic() + timeout
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"streams {sorted(pending)} did not finish in {timeout} s")
        try:
            ev = events.get(timeout=remaining)
        except queue.Empty:
            continue
        if isinstance(ev, TextDelta) and ev.stream_id in deltas:
            deltas[ev.stream_id].append(ev)
        elif isinstance(ev, StreamFinished) and ev.stream_id in pending:
            done[ev.stream_id] = ev
            pending.discard(ev.stream_id)
    return {sid: (deltas[sid], done[sid]) for sid in stream_ids}


def process_name(p) -> str:
    import psutil

    try:
        return " ".join(p.cmdline()) or p.name()
    except psutil.Error:
        return "?"


def engine_core_among(processes) -> bool:
    return any("EngineCore" in process_name(p) for p in processes)


def kill9_and_check_children_die(proc, kids, within_s: float = 5.0) -> None:
    """SIGKILL the app ``proc`` (no handler, no atexit, no flush); every process it had started
    (``kids``, an engine core among them) must be gone ``within_s`` later."""
    assert engine_core_among(kids), [process_name(k) for k in kids]
    proc.kill()
    proc.wait(10)
    check_children_gone(proc, kids, within_s)


def check_children_gone(proc, kids, within_s: float) -> None:
    """``proc`` (the app) has exited: every process it had started (``kids``, and any started
    after they were taken) must be gone ``within_s`` later."""
    import psutil

    app_pid = str(proc.pid)
    _, alive = psutil.wait_procs(kids, timeout=within_s)
    for p in psutil.process_iter():  # any the app started after ``kids`` was taken (vLLM's
        try:  # process titles overwrite /proc/PID/environ: name and session tell them instead)
            if p.pid != proc.pid and p not in alive and (
                    p.environ().get("VOXCAP_APP_PID") == app_pid
                    or ("VLLM::" in p.name() and os.getsid(p.pid) == proc.pid)):
                alive.append(p)
        except (psutil.Error, OSError):
            continue
    left = [(p.pid, process_name(p)) for p in alive]
    for p in alive:  # do not leave them to the next test
        p.kill()
    assert not left, f"still running {within_s:.0f} s after the app ended: {left}"
