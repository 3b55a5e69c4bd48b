"""vLLM's rendezvous files (``vllm_dist_<random>``, left in the temporary folder by every run that
is killed, and by many that are not) go to voxcap's own folder in voxcap's vLLM processes, where
installer/uninstall.sh finds them; a vLLM that is not voxcap's keeps vLLM's
place. Real vLLM imports, in a child process each."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os, sys
import vllm.v1.executor.multiproc_executor as early  # imported before the plugin runs
from voxcap.engine.vllm_adapter.plugin import detach_from_terminal
detach_from_terminal()
import vllm.v1.executor.uniproc_executor as late
print(early.get_file_store_init_method())
print(late.get_file_store_init_method())
"""


def probe(tmp_path, **env) -> list[str]:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TMPDIR": str(tmp_path), **env})
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split()


def test_voxcaps_vllm_processes_meet_in_voxcaps_folder(tmp_path):
    """...named after their process: what a killed one left is removed by the next."""
    folder = tmp_path / f"voxcap-{os.getuid()}"
    folder.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])
    gone.wait()
    (folder / f"vllm_dist_{gone.pid}_0123abcd").write_text("")  # a killed run's
    (folder / f"vllm_dist_{os.getpid()}_4567ef").write_text("")  # a running one's
    # the app (or `voxcap serve`'s server): VOXCAP_APP_PID is this process's own pid
    launcher = ("import os, sys; os.environ['VOXCAP_APP_PID'] = str(os.getpid()); "
                "exec(sys.stdin.read())")
    r = subprocess.run([sys.executable, "-c", launcher], input=PROBE, capture_output=True,
                       text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-3000:]
    methods = r.stdout.split()
    assert len(methods) == 2 and all(m.startswith(f"file://{folder}/vllm_dist_") for m in methods)
    assert all(m.split("/vllm_dist_")[1].split("_")[0].isdigit() for m in methods), methods
    assert folder.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in folder.iterdir()) == [f"vllm_dist_{os.getpid()}_4567ef"]


def test_a_vllm_that_is_not_voxcaps_is_left_alone(tmp_path):
    methods = probe(tmp_path)  # no VOXCAP_APP_PID
    assert all(m.startswith(f"file://{tmp_path}/vllm_dist_") for m in methods), methods
    assert not (tmp_path / f"voxcap-{os.getuid()}").exists()
