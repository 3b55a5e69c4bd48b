"""Where vLLM keeps its files when voxcap runs it: under voxcap's own cache folder.

vLLM writes its caches (model-class inspection, torch.compile and Triton artifacts) to
``~/.cache/vllm`` by default, which no uninstall of voxcap could tell from another program's.
Every place voxcap starts vLLM (the commands, the in-process engine, ``voxcap serve``) points
``VLLM_CACHE_ROOT`` at ``<voxcap cache>/vllm`` first, so ``voxcap prepare`` fills exactly the
caches the real start reads (engine/prepare.py: vLLM leaves the cache root out of its compile
hash, so the key is the same wherever the root is) and uninstall removes them with the rest.
A ``VLLM_CACHE_ROOT`` set by the person wins, for both alike.

The CUDA driver's JIT cache goes there too, and is made large enough: vLLM 0.32's FlashAttention 2
build carries machine code for compute capability 8.x only (its fatbin: sm_80 SASS + PTX), so a
card of another major version that runs it (RTX 50, sm_120) has the driver compile the PTX at the
first graph capture, minutes long (seen on the H200 forced to FA2: 117 s to over 200 s). Cached,
that happens once; the driver's default cache may be too small to keep it.
"""

from __future__ import annotations

import os

from .. import paths

CACHE_ENV = "VLLM_CACHE_ROOT"
JIT_CACHE_ENV = "CUDA_CACHE_PATH"
JIT_CACHE_SIZE_ENV = "CUDA_CACHE_MAXSIZE"
JIT_CACHE_BYTES = 4 * 2**30  # the driver's largest


def cache_env() -> dict[str, str]:
    """The cache variables vLLM's processes get: the person's own, else voxcap's folder."""
    return {CACHE_ENV: os.environ.get(CACHE_ENV) or str(paths.cache_dir() / "vllm"),
            JIT_CACHE_ENV: os.environ.get(JIT_CACHE_ENV) or str(paths.cache_dir() / "cuda-jit"),
            JIT_CACHE_SIZE_ENV: os.environ.get(JIT_CACHE_SIZE_ENV) or str(JIT_CACHE_BYTES)}


def use_voxcap_caches() -> None:
    """Point this process (and what it starts) at voxcap's cache folder; before vLLM's import."""
    os.environ.update(cache_env())
