"""`voxcap download`: the model through the app's downloader, from a local stand-in for the Hub
(no network here): the files arrive, a second run has nothing left to fetch, errors are one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.fake_hub import FILES, FakeHub


@pytest.fixture
def hub():
    server = FakeHub()
    yield server
    server.shutdown()
    server.server_close()


def run_download(*args, env):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", "download", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_download_into_the_folder_the_app_looks_in(hub, tmp_path):
    env = {"HF_ENDPOINT": hub.url, "VOXCAP_DATA_DIR": str(tmp_path / "data")}
    r = run_download(env=env)
    folder = tmp_path / "data" / "models" / "Voxtral-Mini-4B-Realtime-2602"
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"The model is in {folder}: `voxcap gui` finds it there; or " \
                               f"--model {folder}"
    for name, data in FILES.items():
        assert (folder / name).read_bytes() == data
    again = run_download("--dir", str(folder), env=env)  # nothing left to fetch
    assert again.returncode == 0 and hub.ranges == []
    r = run_download(env={"HF_ENDPOINT": "http://127.0.0.1:9", "VOXCAP_DATA_DIR": str(tmp_path)})
    assert r.returncode == 2 and "error: Cannot reach" in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr
