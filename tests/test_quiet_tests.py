"""The ``quiet`` mark in a real parallel run (pytest-xdist, two workers): a quiet test never runs
while a test of the other worker does (tests/support/quiet_tests.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent

BODY = '''
import os, time, pytest

def _span(name, seconds):
    start = time.time()
    time.sleep(seconds)
    with open(os.environ["SPANS"], "a") as f:
        f.write(f"{name} {start} {time.time()}\\n")
'''


def test_a_quiet_test_runs_while_the_other_worker_runs_none(pytester, tmp_path):
    spans = tmp_path / "spans.txt"
    pytester.makeini("[pytest]\nmarkers =\n    quiet: alone\n")
    pytester.makepyfile(
        test_busy=BODY + "".join(f"def test_busy_{i}():\n    _span('busy{i}', 1.0)\n\n" for i in range(4)),
        test_quiet=BODY + "@pytest.mark.quiet\ndef test_quiet():\n    time.sleep(0.5)\n"
                          "    _span('quiet', 1.5)\n")
    env = {"SPANS": str(spans), "VOXCAP_CACHE_DIR": str(tmp_path / "shared"),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = pytester.run(sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadfile",
                              "-p", "support.quiet_tests", "-p", "no:cacheprovider", timeout=120)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert result.ret == 0, result.stdout.str()
    rows = [line.split() for line in spans.read_text().splitlines()]
    (quiet,) = [(float(a), float(b)) for name, a, b in rows if name == "quiet"]
    busy = [(float(a), float(b)) for name, a, b in rows if name != "quiet"]
    assert len(busy) == 4
    overlapping = [s for s in busy if s[0] < quiet[1] and quiet[0] < s[1]]
    assert overlapping == [], (quiet, busy)
