"""The in-process engine's vLLM ports stay on loopback whatever the host name resolves to: an app
started in a network namespace where the box's name resolves to an office address (10.77.0.1,
support/office_namespace.py) runs the tiny model's engine; `ss` there lists what listens. vLLM's
gloo (the CPU build: its CPU process groups) had opened its listeners on the office address."""

from __future__ import annotations

import ipaddress
import subprocess
import sys

import pytest
from support.office_namespace import hosts_file, in_office, listeners, needs_namespaces

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900), needs_namespaces]

APP = r"""
import subprocess, sys
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.settings import InProcessSettings
eng = LocalEngine(InProcessSettings(sys.argv[1], max_streams=1, enforce_eager=True)).start()
try:
    eng.wait_ready(timeout=600)
    print(subprocess.run(["ss", "-ltn"], capture_output=True, text=True, check=True).stdout)
finally:
    eng.shutdown()
"""


def test_the_engines_own_ports_stay_on_loopback(tiny_weights_dir, tmp_path):
    r = subprocess.run(in_office(hosts_file(tmp_path), [sys.executable, "-c", APP,
                                                        str(tiny_weights_dir)]),
                       capture_output=True, text=True, timeout=800)
    assert r.returncode == 0, r.stderr[-3000:]
    found = listeners(r.stdout[r.stdout.index("State"):])
    assert found, "vLLM's CPU build opens ports of its own (gloo)"
    off_loopback = [a for a in found if not ipaddress.ip_address(a[0]).is_loopback]
    assert off_loopback == [], f"the engine's ports beyond loopback: {off_loopback}"
