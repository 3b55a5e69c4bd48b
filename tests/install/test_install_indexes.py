"""The installer tries each package index once before it builds anything: one
that does not answer stops it at once with one line naming the index and the setting that
avoids it, not minutes of pip's silent retries. The indexes here are on loopback only: a small
HTTP server that answers, and a closed port on 127.0.0.1 that refuses."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from support.install_helpers import new_home

pytestmark = pytest.mark.slow


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free again once closed: nothing listens there


@pytest.fixture
def answering_index():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    server.shutdown()
    server.server_close()


def install(home, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    # the helpers' offline --pip-args replaced: these runs use package indexes
    argv = home.install_argv("--cpu", "--pip-args", "--no-build-isolation", *args)
    t0 = time.monotonic()
    r = subprocess.run(argv, env={**home.env, **env}, cwd=home.root, capture_output=True,
                       text=True, timeout=120)
    return r, time.monotonic() - t0


def test_install_stops_at_an_index_it_cannot_reach(tmp_path_factory, checkout, answering_index):
    home = new_home(tmp_path_factory, checkout, "indexes")
    refused = f"http://127.0.0.1:{closed_port()}"
    # PyTorch's CPU index (--cpu) does not answer; pip's own index does
    r, seconds = install(home, PIP_INDEX_URL=answering_index,
                         VOXCAP_TORCH_CPU_INDEX=f"{refused}/whl/cpu")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"Checking the package index {answering_index}\n" in r.stdout
    assert f"voxcap was not installed: cannot reach the package index {refused}/whl/cpu " \
           "(connection refused)\n" in r.stderr
    assert "VOXCAP_TORCH_CPU_INDEX= (empty) to skip it" in r.stderr
    assert seconds < 30 and "Creating the environment" not in r.stdout
    assert not (home.prefix / "envs").exists() or not any((home.prefix / "envs").iterdir())
    # PyTorch's index skipped as the line said; pip's index given in --pip-args does not answer
    r, _ = install(home, "--pip-args", f"--no-build-isolation --index-url {refused}/simple",
                   VOXCAP_TORCH_CPU_INDEX="")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "whl/cpu" not in r.stdout + r.stderr
    assert f"cannot reach the package index {refused}/simple (connection refused)" in r.stderr
    assert '--pip-args "--index-url URL" for another one (a mirror)' in r.stderr
    assert "Traceback" not in r.stderr and "Creating the environment" not in r.stdout


def test_install_index_check_can_be_left_out(tmp_path_factory, checkout):
    home = new_home(tmp_path_factory, checkout, "no-check")
    refused = f"http://127.0.0.1:{closed_port()}/simple"
    r, _ = install(home, PIP_INDEX_URL=refused, VOXCAP_SKIP_INDEX_CHECK="0")  # 0: still checked
    assert r.returncode == 1 and f"cannot reach the package index {refused}" in r.stderr
    argv = home.install_argv("--cpu", "--pip-args", "--no-build-isolation")
    proc = subprocess.Popen(argv, env={**home.env, "PIP_INDEX_URL": refused,
                                       "VOXCAP_SKIP_INDEX_CHECK": "1"},
                            cwd=home.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    seen = []
    try:
        for line in proc.stdout:  # up to the build, which starts without a check
            seen.append(line)
            if line.startswith("Creating the environment"):
                break
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # the installer's Ctrl-C: nothing is kept
        proc.communicate(timeout=120)
    assert seen[-1].startswith("Creating the environment"), seen
    assert not any("Checking the package index" in line for line in seen), seen


def test_install_help_and_the_guide_name_the_settings(checkout):
    r = subprocess.run(["bash", str(checkout / "installer" / "install.sh"), "--help"],
                       capture_output=True, text=True, timeout=30)
    guide = (checkout / "docs" / "guide" / "install.md").read_text(encoding="utf-8")
    for setting in ("VOXCAP_TORCH_CPU_INDEX=", '--pip-args "--index-url URL"',
                    "VOXCAP_SKIP_INDEX_CHECK=1"):
        assert setting in r.stdout, setting
        assert setting in guide, setting
