"""On a machine without an NVIDIA GPU (vLLM's CPU build, as here) graph modes and the GPU memory
share change nothing: the predicate says so (the GUI shows them as not applicable with it), and
the controller does not restart the real engine for them (a 30 s gap in the captions for
nothing), while a setting that does apply still restarts it."""

from __future__ import annotations

import dataclasses
import time

from support.borrowed_engine import borrowed_factory
from support.event_wait import Events
from support.event_wait import wait_for as _wait

from voxcap.app.controller import SessionController
from voxcap.engine.settings import CUDA_ONLY, applies, changes_that_apply
from voxcap.engine.vllm_adapter.platform import cuda_here
from voxcap.events import EngineRestarting


def test_the_predicate(tiny_model_dir):
    assert cuda_here() is False  # vLLM's CPU build, no NVIDIA GPU
    assert not applies("graph_mode", cuda=False) and applies("graph_mode", cuda=True)
    assert not applies("gpu_memory_utilization", cuda=False)
    assert applies("kv_cache_gib", cuda=False)  # the CPU build sizes its cache from it too
    assert applies("delay_ms", cuda=False)
    assert CUDA_ONLY == {"graph_mode", "capture_sizes", "gpu_memory_utilization"}


def test_no_restart_for_a_graph_mode_without_cuda(engine, engine_hub, tmp_path):
    settings = engine.settings
    piecewise = dataclasses.replace(settings, graph_mode="PIECEWISE", capture_sizes=(1, 2))
    assert changes_that_apply(settings, piecewise, cuda=False) == []
    assert changes_that_apply(settings, piecewise, cuda=True) == ["graph_mode", "capture_sizes"]
    assert engine.on_cuda is False

    q = Events()
    ctl = SessionController(q.put, engine_factory=borrowed_factory(engine, engine_hub),
                            journal_root=tmp_path)
    try:
        ctl.start_engine(settings)
        ctl.apply_engine_settings(piecewise, "graph mode PIECEWISE")
        time.sleep(1.0)
        while not q.empty():
            q.all.append(q.get())
        assert not [e for e in q.all if isinstance(e, EngineRestarting)]
        later = dataclasses.replace(piecewise, delay_ms=960)
        ctl.apply_engine_settings(later, "delay 960 ms")  # this one applies: restarted
        ev, _ = _wait(q, lambda e: isinstance(e, EngineRestarting), timeout=30)
        assert ev.reason == "delay 960 ms"
    finally:
        assert ctl.shutdown().wait(30)
