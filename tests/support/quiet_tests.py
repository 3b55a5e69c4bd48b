"""Tests marked ``quiet`` run while no other worker runs a test (pytest-xdist runs only): a
pytest plugin, loaded by tests/conftest.py.

A quiet test measures something in real time that the other worker's load changes (seen: the
PipeWire echo canceller's reduction fell from 77-82 dB to 9.6 dB while the other worker ran
vLLM engines on this 2-core machine). Every test holds a shared lock from its set-up to its
teardown; a quiet one holds it exclusively, so it waits for the other worker's test to end, and
that worker's next test waits for it. A turnstile (a second lock taken around each request)
keeps a waiting quiet test from being passed by a stream of shared ones. In one process there
is nobody to wait for: nothing is locked.

What the lock cannot stop: background work a fixture started earlier (e.g. vLLM's reference
tokens computed while the session engine starts) keeps running.
"""

from __future__ import annotations

import fcntl
import os
import time

import pytest

LOCK_DIR_ENV = "VOXCAP_CACHE_DIR"  # the one folder a run's workers share (tests/conftest.py)


def _lock_files(config) -> tuple[str, str] | None:
    if not hasattr(config, "workerinput"):
        return None
    folder = os.environ.get(LOCK_DIR_ENV)
    if not folder:
        return None
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "quiet-turnstile.lock"), os.path.join(folder, "quiet-tests.lock")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    files = _lock_files(item.config)
    if files is None:
        yield
        return
    quiet = item.get_closest_marker("quiet") is not None
    with open(files[0], "a") as turnstile, open(files[1], "a") as lock:
        waited = time.monotonic()
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if quiet else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        if quiet:
            item.add_report_section("setup", "quiet", f"waited {time.monotonic() - waited:.1f} s "
                                    "for the other worker's test to end")
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
