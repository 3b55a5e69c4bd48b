"""Where vLLM keeps its files when voxcap runs it: under voxcap's own cache folder.

vLLM writes its caches (model-class inspection, torch.compile and Triton artifacts) to
``~/.cache/vllm`` by default, which no uninstall of voxcap could tell from another program's.
Every place voxcap starts vLLM (the commands, the in-process engine, ``voxcap serve``) points
``VLLM_CACHE_ROOT`` at ``<voxcap cache>/vllm`` first, so ``voxcap prepare`` fills exactly the
caches the real start reads (engine/prepare.py: vLLM leaves the cache root out of its compile
hash, so the key is the same wherever the root is) and uninstall removes them with the rest.
A ``VLLM_CACHE_ROOT`` set by the person wins, for both alike.
"""

from __future__ import annotations

import os

from .. import paths

CACHE_ENV = "VLLM_CACHE_ROOT"


def cache_env() -> dict[str, str]:
    """The cache variables vLLM's processes get: the person's own, else voxcap's folder."""
    return {CACHE_ENV: os.environ.get(CACHE_ENV) or str(paths.cache_dir() / "vllm")}


def use_voxcap_caches() -> None:
    """Point this process (and what it starts) at voxcap's cache folder; before vLLM's import."""
    os.environ.update(cache_env())
