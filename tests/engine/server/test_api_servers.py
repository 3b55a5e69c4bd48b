"""How many API server processes `voxcap serve` runs unless told (engine/server/api_servers.py)."""

from __future__ import annotations

import subprocess
import sys

from voxcap.engine.server.api_servers import STREAMS_PER_API_SERVER, api_servers_for


def test_one_per_24_streams_up_to_the_spare_cores_on_the_gpu_build():
    per = STREAMS_PER_API_SERVER
    assert [api_servers_for(n, 1, "cuda", cpus=16) for n in (1, 2, per, per + 1, 128)] == \
        [1, 1, 1, 2, 6]
    assert api_servers_for(2 * 64, 2, "cuda", cpus=16) == 6  # two GPUs' engines: 128 in all
    assert api_servers_for(128, 1, "cuda", cpus=4) == 2  # a core for the engine core, one spare
    assert api_servers_for(128, 1, "cuda", cpus=2) == 1
    assert api_servers_for(128, 1, "cpu", cpus=64) == 1  # vLLM's CPU build runs one


def test_serve_on_the_cpu_build_keeps_one_for_many_streams(tiny_model_dir):
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", "serve", "--model", str(tiny_model_dir),
                        "--dummy-weights", "--max-streams", "128", "--print-command"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--api-server-count" not in r.stdout and "vllm.entrypoints.openai.api_server" in r.stdout
    assert "--max-num-seqs 128" in r.stdout
