"""A desktop logout sends SIGTERM (and SIGHUP) to every process of the session at once: the app
quits as Ctrl+Q does, within the 5 s it promises, and leaves nothing in the temporary folder,
neither its own files nor vLLM's or torch's. A run killed with `kill -9` can leave its files;
the next start removes them, and its own quit leaves nothing either.

The real `voxcap gui` on the tiny CPU engine, in a process group of its own with its own
temporary folder (TMPDIR) and no runtime folder (its socket is then in the temporary one)."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.app_walk import AppProcess

QUIT_S = 5.0  # what docs/guide/accessibility.md promises for Ctrl+Q


@pytest.fixture
def short_tmp():
    """A temporary folder with a short path, as /tmp is (vLLM's socket paths must fit 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="vx-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Gui(AppProcess):
    def __init__(self, model, tmp: Path, home: Path) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("XDG_RUNTIME_DIR", "TORCHINDUCTOR_CACHE_DIR", "VLLM_RPC_BASE_PATH")}
        env.update(QT_QPA_PLATFORM="offscreen", TMPDIR=str(tmp), OMP_NUM_THREADS="1",
                   VOXCAP_CONFIG_DIR=str(home / "config"), VOXCAP_DATA_DIR=str(home / "data"),
                   VOXCAP_STATE_DIR=str(home / "state"))
        super().__init__([sys.executable, "-m", "voxcap.cli", "gui", "--model", str(model), "--eager"],
                         env, home, subprocess.DEVNULL)

    def signal_group(self, sig: int) -> float:
        """``sig`` to every process of the app's group at once; seconds until all are gone."""
        t0 = time.monotonic()
        os.killpg(self.proc.pid, sig)
        self.proc.wait(30)
        while True:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return time.monotonic() - t0
            assert time.monotonic() - t0 < 30, "the engine's processes outlived the app"
            time.sleep(0.02)

    def closed_at(self) -> float:
        """When the app said captioning closed (its log's wall clock)."""
        stamp = re.search(r"^(\S+ \S+) INFO .*captioning closed$", self.text(), re.M)
        assert stamp, self.text()[-3000:]
        return datetime.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _left(tmp: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))


@pytest.mark.engine
@pytest.mark.slow
def test_logout_leaves_nothing_in_the_temporary_folder(tiny_weights_dir, short_tmp, tmp_path):
    killed = Gui(tiny_weights_dir, short_tmp, tmp_path)
    killed.wait_ready()
    killed.signal_group(signal.SIGKILL)  # kill -9: nothing could remove its files
    (engine_folder,) = [p.name for p in short_tmp.glob("voxcap-engine-*")]

    app = Gui(tiny_weights_dir, short_tmp, tmp_path)
    app.wait_ready()
    running = _left(short_tmp)
    assert not (short_tmp / engine_folder).exists(), running  # the killed run's went at the start
    # vLLM's rendezvous file, in the engine's folder
    assert any(re.match(r"voxcap-engine-[^/]+/vllm_dist_", name) for name in running), running
    took = app.signal_group(signal.SIGTERM)
    gone_at = time.time()
    assert _left(short_tmp) == []
    assert "SIGTERM received: quitting" in app.text()
    assert took < QUIT_S, f"{took:.1f} s from SIGTERM to every process gone"
    # once closed (captions flushed, journal closed) the app leaves at once: torch's and vLLM's
    # teardown at the interpreter's exit took 2 s more
    assert gone_at - app.closed_at() < 1.0
