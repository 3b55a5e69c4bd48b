"""vLLM's and the libraries' output goes to vllm.log, also when the app runs from the desktop
launcher (which tees stderr for its error box), and a stderr without a file descriptor is said
in one line of voxcap.log, without a traceback. Each case runs in a process of its own: the
redirection moves its real file descriptor 2."""

from __future__ import annotations

import os
import subprocess
import sys

LAUNCHED = """
import io, os, sys
from voxcap import launcher, logs
logs.setup(None)
with launcher._tee_stderr(io.StringIO()):
    with logs.library_output_to_log() as path:
        os.write(2, b"written by C code\\n")
        print("voxcap's own line", file=logs.terminal(), flush=True)
print("library log:", path)
"""

NO_FD = """
import io, sys
from voxcap import logs
logs.setup(None)
sys.stderr = io.StringIO()
with logs.library_output_to_log() as path:
    pass
print("library log:", path)
"""


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "VOXCAP_STATE_DIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=True)


def test_the_launchers_start_writes_library_output_to_vllm_log(tmp_path):
    out = _run(LAUNCHED, tmp_path)
    assert f"library log: {tmp_path / 'vllm.log'}" in out.stdout, out.stdout + out.stderr
    assert "written by C code" in (tmp_path / "vllm.log").read_text()
    assert "written by C code" not in out.stderr
    assert "voxcap's own line" in out.stderr  # the person still sees voxcap's lines
    assert "Traceback" not in (tmp_path / "voxcap.log").read_text()


def test_a_stderr_without_a_file_descriptor_is_one_line_without_a_stack(tmp_path):
    out = _run(NO_FD, tmp_path)
    assert "library log: None" in out.stdout
    log = (tmp_path / "voxcap.log").read_text()
    assert "Traceback" not in log and "not to vllm.log (UnsupportedOperation: fileno)" in log, log
    assert len(log.strip().splitlines()) == 1
