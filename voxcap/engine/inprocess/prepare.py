"""Work done before the first start, so that a person pressing Start waits for a warm engine.

Two of vLLM's caches make the difference between a cold and a warm start on the GPU (H200, real
shape: 80 s cold, 18 s warm; docs/perf/startup.md):

* Model-class inspection (11.5 s): vLLM imports the model's module in a subprocess to learn its
  traits and caches them under ``$VLLM_CACHE_ROOT/modelinfos``, keyed by that module file's hash
  only: ``fill_model_info_cache()`` does it once, at install.
* torch.compile, Triton kernels (52 s): the compiled code is keyed by vLLM's config hash. That
  hash includes the model folder's path and every setting that shapes the graphs, but not the
  weights nor how they are loaded (``LoadConfig.compute_hash`` has no factors). An engine started
  with stand-in weights on the model's own folder (``params.json`` is enough) therefore compiles
  exactly what the real start loads: ``prepared_settings()`` gives its settings, and the app runs
  it (``voxcap prepare --model``) while the weights download. ``vllm_config_hash()`` is the check.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from ..settings import InProcessSettings

log = logging.getLogger(__name__)

MODEL_ARCH = "VoxtralRealtimeGeneration"  # what vLLM resolves Voxtral Realtime's params.json to


def fill_model_info_cache() -> Path:
    """Have vLLM inspect the model class now (a subprocess of its own) and cache what it learns;
    returns the cache file. A no-op but for the file check when the cache is already filled."""
    from ..vllm_adapter.env import use_voxcap_caches
    from ..vllm_adapter.internals import inspect_model_class

    use_voxcap_caches()  # the cache the engine's start reads (engine/vllm_adapter/env.py)
    return inspect_model_class(MODEL_ARCH)


def prepared_settings(settings: InProcessSettings) -> InProcessSettings:
    """The settings of the stand-in engine that compiles for ``settings``: the same in every
    graph-shaping respect, with random weights (nothing is read from the weights file)."""
    return dataclasses.replace(settings, dummy_weights=True)


def vllm_config_hash(settings: InProcessSettings, build: str) -> str:
    """vLLM's config hash for an engine with ``settings`` (what names its compile cache)."""
    from vllm.engine.arg_utils import AsyncEngineArgs

    from .engine import LocalEngine

    engine = LocalEngine(settings)
    try:
        args = engine.engine_args(build)
        return AsyncEngineArgs(**args).create_engine_config().compute_hash()
    finally:
        engine._cleanup()
