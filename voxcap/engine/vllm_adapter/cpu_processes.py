"""On vLLM 0.32.0's CPU build, the engine's processes as on one GPU (``VOXCAP_VLLM_CPU_AS_GPU=1``;
set by the in-process engine, engine/inprocess/engine.py; off unless set).

With one GPU, vLLM runs its worker inside the engine-core process (``distributed_executor_backend
"uni"``), and voxcap forks that process from the app (engine/inprocess/engine.py: it starts with torch and
vLLM imported). vLLM's CPU platform (``CpuPlatform.check_and_update_config``) overrides both: it
turns "uni" into "mp" (one more process: a worker spawned by the engine core) and sets
``VLLM_WORKER_MULTIPROC_METHOD=spawn``. Each spawned process imports torch and vLLM again: on
this 2-core machine a start took 42 s, 24 of them in those two imports, and the tests start
vLLM tens of times (docs/perf/upstream-cpu-processes.md). This keeps what was asked:

- "uni" stays "uni" for one worker (world size 1): the worker runs in the engine core;
- the fork voxcap asked for (or vLLM's default, fork, when nothing was asked) stays a fork when
  this process's torch runs one OpenMP thread (``torch.get_num_threads() == 1``, e.g.
  OMP_NUM_THREADS=1): GNU OpenMP cannot be used in a child forked after its parent ran a
  parallel region with a thread pool, and with one thread there is no pool. Otherwise the
  engine core is spawned, as vLLM does.

A forked engine core holds every module the app imported, and on the CPU build the worker's
start scans them all (``register_triton_kernel_overrides`` → ``triton_utils.dispatcher.
_rebind_kernels``: ``hasattr(value, "__dict__")`` on every module attribute), which fails with
what some objects raise instead of AttributeError (seen: sounddevice's cffi library, "ffi.error:
symbol 'PaMacCore_GetChannelName' not found", in ``voxcap doctor --selftest``). The scan is
given the modules it can read; the others cannot hold vLLM's kernels.

Measured (``benchmarks/startup_profile.py --enforce-eager --runs warm``, tiny model): ready after
42.1 s as vLLM does it, 31.3 s with "uni", 18.5 s with "uni" and fork. The tokens are vLLM's own
(tests/engine/vllm_adapter/test_parity.py compares them with vLLM's realtime path, run as vLLM runs it).
Guarded to the exact vLLM version; the CPU platform is not used on a GPU, so there it does
nothing.
"""

from __future__ import annotations

import logging
import os
import sys

from .pin import PINNED_VLLM

logger = logging.getLogger("vllm.voxcap_patches")

CPU_AS_GPU_ENV = "VOXCAP_VLLM_CPU_AS_GPU"
_FLAG = "_voxcap_cpu_as_gpu"
START_ENV = "VLLM_WORKER_MULTIPROC_METHOD"


def enabled() -> bool:
    return os.environ.get(CPU_AS_GPU_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def apply() -> bool:
    """Wrap CpuPlatform.check_and_update_config (once per process) on the pinned vLLM."""
    try:
        import vllm
        from vllm.platforms.cpu import CpuPlatform
    except Exception:  # vLLM missing or broken: nothing to patch
        logger.warning("voxcap CPU processes not applied: vLLM's CPU platform could not be "
                       "imported", exc_info=True)
        return False
    version = getattr(vllm, "__version__", "?")
    if version != PINNED_VLLM:
        logger.warning("voxcap CPU processes not applied: written for vLLM %s, this is %s (check "
                       "voxcap/engine/vllm_adapter/cpu_processes.py against its CpuPlatform)",
                       PINNED_VLLM, version)
        return False
    original = CpuPlatform.check_and_update_config.__func__
    if getattr(original, _FLAG, False):
        return True  # a second plugin load in the same process

    def check_and_update_config(cls, vllm_config) -> None:
        asked = os.environ.get(START_ENV)
        parallel = vllm_config.parallel_config
        backend = parallel.distributed_executor_backend
        original(cls, vllm_config)
        kept = []
        if backend == "uni" and parallel.world_size == 1 and \
                parallel.distributed_executor_backend == "mp":
            parallel.distributed_executor_backend = "uni"
            kept.append("worker inside the engine core")
        if asked in (None, "fork") and os.environ.get(START_ENV) == "spawn" and _one_omp_thread():
            os.environ[START_ENV] = "fork"
            kept.append("engine core forked")
        if kept:
            logger.info("voxcap CPU processes (pid %d): %s, as on one GPU", os.getpid(),
                        ", ".join(kept))

    setattr(check_and_update_config, _FLAG, True)
    setattr(check_and_update_config, "__wrapped__", original)  # noqa: B010 (to mypy a function has no __wrapped__)
    CpuPlatform.check_and_update_config = classmethod(check_and_update_config)
    _scan_only_readable_modules()
    return True


def _scan_only_readable_modules() -> None:
    """Wrap triton_utils.dispatcher._rebind_kernels: modules with an attribute whose
    ``hasattr(..., "__dict__")`` raises are out of sys.modules while it runs, back after."""
    from vllm.triton_utils import dispatcher

    original = dispatcher._rebind_kernels
    if getattr(original, _FLAG, False):
        return

    def _rebind_kernels(overrides) -> None:
        unreadable = {name: module for name, module in list(sys.modules.items())
                      if not _readable(module)}
        for name in unreadable:
            sys.modules.pop(name, None)
        try:
            original(overrides)
        finally:
            sys.modules.update(unreadable)
        if unreadable:
            logger.info("voxcap CPU processes: kernel scan left out %d module(s) it cannot read "
                        "(%s)", len(unreadable), ", ".join(sorted(unreadable)[:5]))

    setattr(_rebind_kernels, _FLAG, True)
    setattr(_rebind_kernels, "__wrapped__", original)  # noqa: B010 (as above)
    dispatcher._rebind_kernels = _rebind_kernels


def _readable(module) -> bool:
    namespace = getattr(module, "__dict__", None)
    if not namespace:
        return True
    try:
        for value in list(namespace.values()):
            hasattr(value, "__dict__")
    except Exception:  # noqa: BLE001 - what vLLM's scan would die of
        return False
    return True


def _one_omp_thread() -> bool:
    import torch

    return torch.get_num_threads() == 1
