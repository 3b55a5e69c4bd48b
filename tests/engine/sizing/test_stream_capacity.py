"""How many streams a server takes (engine/sizing/streams.py): no fixed cap, what the GPU fits
at the session length asked, said by `voxcap serve`'s start gate (engine/server/args.py) and the
doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from voxcap.engine.settings import DEFAULT_STEP_TOKENS, InProcessSettings
from voxcap.engine.sizing.memory import Sizing, choose_precision, footprint, start_peak_bytes
from voxcap.engine.sizing.precision import BY_NAME, GpuFacts
from voxcap.engine.sizing.streams import most_streams
from voxcap.errors import ConfigError

GIB = 2**30
H200 = GpuFacts(int(139.8 * GIB), int(139 * GIB), (9, 0))


def test_more_than_64_streams_up_to_the_step_token_budget(tiny_model_dir):
    s = InProcessSettings(str(tiny_model_dir), max_streams=128).validated()
    assert s.max_streams == 128 and s.capture_sizes[-1] == 128
    with pytest.raises(ConfigError) as no:
        InProcessSettings(str(tiny_model_dir), max_streams=0).validated()
    assert "use 1 or more" in no.value.fix
    with pytest.raises(ConfigError) as over:
        InProcessSettings(str(tiny_model_dir), max_streams=300).validated()
    assert f"step token budget ({DEFAULT_STEP_TOKENS} tokens" in over.value.message
    assert over.value.fix == f"use at most {DEFAULT_STEP_TOKENS} streams"
    InProcessSettings(str(tiny_model_dir), max_streams=300, step_tokens=512).validated()


@pytest.mark.parametrize("precision", ["bfloat16", "fp8_kv"])
def test_the_most_streams_that_fit_is_the_boundary(precision):
    """The real model on an H200: n streams start, n + 1 do not; shorter sessions fit more."""
    found = []
    for length in (8192, 2048, 1024):
        sizing = Sizing(precision, 1, length)
        best = most_streams(None, sizing, H200, 512)
        n = best.streams
        assert best.fits and best.precision.name == precision
        assert choose_precision(None, replace(sizing, streams=n), H200).fits
        assert not choose_precision(None, replace(sizing, streams=n + 1), H200).fits
        found.append(n)
    assert found[0] < found[1] < found[2], found
    assert most_streams(None, Sizing(precision, 1, 1024), H200, 40).streams == 40  # the limit
    assert most_streams(None, Sizing(precision, 1, 2048), GpuFacts(8 * GIB, GIB, (9, 0)),
                        64) is None  # not even one
    assert most_streams(None, Sizing(precision, 1, 2048), GpuFacts(), 64) is None  # unknown


GATE = """
import json, sys
from voxcap import gpu
from voxcap.engine.server.args import engine_args_for
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import VoxcapError
settings = InProcessSettings(sys.argv[1], dummy_weights=True, max_streams=int(sys.argv[2]),
                             max_model_len=1024, precision=sys.argv[3]).validated()
try:
    args, _ = engine_args_for(settings, "cuda", [])
except VoxcapError as exc:
    print(json.dumps({"error": exc.message, "fix": exc.fix}))
else:
    print(json.dumps({"max_num_seqs": args["max_num_seqs"]}))
"""


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    from support.fake_nvml import fake_nvml_or_skip

    return fake_nvml_or_skip(tmp_path_factory)


def test_serve_refuses_more_streams_than_fit_and_says_how_many_do(tiny_model_dir, fake_nvml):
    """The CUDA build's start gate (NVML through the fake driver), with the tiny model: a GPU
    with room for 40 of its sessions in the precision asked (for Automatic: in the most compact
    one, which it falls back to). Asked 128, the start is refused with the most that fit; asked
    that many, it starts with them."""
    from voxcap.engine.model.folder import inspect_model_dir

    info = inspect_model_dir(tiny_model_dir, dummy_weights=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FAKE_NVML") and k != "CUDA_VISIBLE_DEVICES"}
    env.update(LD_LIBRARY_PATH=str(fake_nvml), VOXCAP_NVML="ctypes", FAKE_NVML_COUNT="1",
               FAKE_NVML_TOTAL=str(64 * GIB), FAKE_NVML_RESERVED="0")

    def gate(streams: int, precision: str, free: int) -> dict:
        r = subprocess.run([sys.executable, "-c", GATE, str(tiny_model_dir), str(streams),
                            precision], env=dict(env, FAKE_NVML_FREE=str(free)),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    for asked, compact in (("bfloat16", "bfloat16"), ("auto", "mxfp4_kv")):
        p = BY_NAME[compact]
        free = footprint(info, 40, 1024, precision=p).total_bytes + start_peak_bytes(p)
        refused = gate(128, asked, free)
        assert "fix" in refused, (asked, refused)
        fix = refused["fix"]
        assert fix.startswith("serve --max-streams 40 (") and "sessions of 1024 tokens" in fix, \
            refused
        assert gate(40, asked, free) == {"max_num_seqs": 40}, asked
