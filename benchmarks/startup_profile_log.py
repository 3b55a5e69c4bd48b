"""Logging handler + start-up timers for benchmarks.startup_profile (not part of voxcap).

vLLM's logging config (VLLM_LOGGING_CONFIG_PATH) names ``RecordFile``, so every vLLM process
imports this module when it configures logging: early, before vLLM builds its worker. Importing it
also installs timers: how long selected imports and start-up methods take in each process, logged
as "startup_profile: ... took X s" records (vLLM logs no start for some of these stages, e.g. the
kernel warm-up that imports the MiniMax-M3 model and torchvision).
"""

import functools
import importlib.abc
import json
import logging
import os
import sys
import time


class RecordFile(logging.Handler):
    """One JSON line per record: wall time, pid, logger, level, first line of the message."""
    def __init__(self, path):
        super().__init__()
        self.path = path

    def emit(self, record):
        try:
            msg = record.getMessage().splitlines()[0][:300]
        except Exception:  # noqa: BLE001 (a malformed record is left out of the profile)
            return
        line = json.dumps({"t": record.created, "pid": os.getpid(), "name": record.name,
                           "level": record.levelname, "msg": msg})
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


_log = logging.getLogger("vllm.startup_profile")
TIMED_IMPORTS = {"torchvision", "vllm.models.minimax_m3.nvidia.model",
                 "vllm.model_executor.warmup.minimax_m3_msa_warmup"}
TIMED_CALLS = {
    "vllm.model_executor.warmup.kernel_warmup": ["kernel_warmup"],
    "vllm.v1.worker.gpu_worker": ["Worker.init_device", "Worker.load_model",
                                  "Worker.determine_available_memory",
                                  "Worker.initialize_from_config", "Worker.compile_or_warm_up_model"],
    "vllm.v1.worker.gpu_model_runner": ["GPUModelRunner.profile_run", "GPUModelRunner.capture_model",
                                        "GPUModelRunner._dummy_sampler_run"],
    "vllm.v1.worker.cpu_worker": ["CPUWorker.init_device", "CPUWorker.determine_available_memory",
                                  "CPUWorker.compile_or_warm_up_model"],
    "vllm.v1.worker.cpu_model_runner": ["CPUModelRunner.load_model", "CPUModelRunner.warming_up_model"],
}


def _timed(owner, attr, label):
    fn = getattr(owner, attr, None)
    if fn is None or getattr(fn, "_startup_timed", False):
        return
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _log.info("startup_profile: %s took %.3f s", label, time.perf_counter() - t)
    timed._startup_timed = True
    setattr(owner, attr, timed)


class _Timer(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in TIMED_IMPORTS and name not in TIMED_CALLS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module
        def timed_exec(module):
            t = time.perf_counter()
            exec_module(module)
            if name in TIMED_IMPORTS:
                _log.info("startup_profile: import %s took %.3f s", name, time.perf_counter() - t)
            for dotted in TIMED_CALLS.get(name, ()):
                owner, attr = module, dotted
                if "." in dotted:
                    cls, attr = dotted.split(".")
                    owner = getattr(module, cls, None)
                if owner is not None:
                    _timed(owner, attr, dotted)
        loader.exec_module = timed_exec
        return spec


if not any(isinstance(f, _Timer) for f in sys.meta_path):
    sys.meta_path.insert(0, _Timer())
