"""The engine's parts stay apart (tests/contracts/engine_parts.py): the remote engine and what a
vLLM-free install loads never import vllm or torch, only the vLLM adapter reaches into vLLM's
internals, and no import circle exists. Each rule is also shown catching a broken tree."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from contracts.engine_parts import (
    VLLM_FREE_AT_IMPORT,
    adapter_violations,
    import_cycles,
    vllm_free_violations,
)

import voxcap

PACKAGE = Path(voxcap.__file__).parent


def test_voxcap_keeps_its_engine_parts_apart():
    problems = vllm_free_violations(PACKAGE) + adapter_violations(PACKAGE)
    assert not problems, "\n".join(problems)


def test_voxcap_has_no_import_circle():
    cycles = import_cycles(PACKAGE)
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def _tree(tmp_path, files: dict[str, str]) -> Path:
    root = tmp_path / "voxcap"
    for name in ("__init__.py", "engine/__init__.py", "engine/remote/__init__.py",
                 "engine/vllm_adapter/__init__.py", "engine/inprocess/__init__.py"):
        files.setdefault(name, "")
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def test_torch_reached_from_the_remote_engine_fails(tmp_path):
    root = _tree(tmp_path, {
        "engine/remote/engine.py": "from ..stats import SAMPLE_RATE\n",
        "engine/stats.py": "def f():\n    import torch\n",  # lazy, two steps away: still counts
    })
    (problem,) = vllm_free_violations(root)
    assert "voxcap/engine/stats.py:2" in problem and "torch" in problem
    assert "voxcap.engine.remote.engine" in problem


def test_vllm_at_import_time_of_an_entry_point_fails_but_a_lazy_one_passes(tmp_path):
    root = _tree(tmp_path, {
        "cli.py": "from .engine import factory\n",
        "engine/factory.py": "def build():\n    from .inprocess import engine\n",
        "engine/inprocess/engine.py": "import vllm\n",
        "app/__init__.py": "", "app/controller.py": "from ..engine.inprocess import engine\n",
    })
    (problem,) = vllm_free_violations(root)  # cli reaches vllm only lazily; the controller at import
    assert "voxcap.app.controller" in problem and "at import time" in problem


def test_a_vllm_internal_outside_the_adapter_fails(tmp_path):
    root = _tree(tmp_path, {
        "engine/inprocess/engine.py": """\
            from vllm.sampling_params import SamplingParams
            def start():
                from vllm.v1.engine.async_llm import AsyncLLM
                from vllm.engine.arg_utils import _private_helper
            """,
        "engine/vllm_adapter/internals.py": "from vllm.v1.engine.async_llm import AsyncLLM\n",
    })
    problems = adapter_violations(root)
    assert len(problems) == 2, problems
    assert any(":3:" in p and "vllm.v1.engine.async_llm" in p for p in problems)
    assert any(":4:" in p and "_private_helper" in p for p in problems)


def test_an_import_circle_fails_lazy_or_not(tmp_path):
    root = _tree(tmp_path, {
        "captions/__init__.py": "",
        "captions/journal.py": "def f():\n    from .sessions import Session\n",
        "captions/sessions.py": "from .journal import sessions_root\n",
        "engine/vllm_adapter/patches.py": "from . import cpu_processes\n",
        "engine/vllm_adapter/cpu_processes.py": "from .patches import PIN\n",
        "engine/vllm_adapter/pin.py": "PIN = 1\n",
    })
    cycles = import_cycles(root)
    assert sorted(cycles) == [
        ["voxcap.captions.journal", "voxcap.captions.sessions"],
        ["voxcap.engine.vllm_adapter.cpu_processes", "voxcap.engine.vllm_adapter.patches"]]


def test_a_vllm_free_interpreter_loads_the_remote_path():
    """What the contract claims, run: with vllm and torch unimportable, the remote-only install's
    entry points import and the factory builds a remote engine."""
    code = textwrap.dedent(f"""
        import importlib, sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("vllm", "torch"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        for m in {list(VLLM_FREE_AT_IMPORT)!r}:
            importlib.import_module(m)
        from voxcap.engine.factory import build_engine
        from voxcap.engine.remote.settings import RemoteSettings
        engine = build_engine(RemoteSettings(server_url="ws://127.0.0.1:9", server_model=""))
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("vllm", "torch"))
        print(type(engine.inner).__name__, heavy)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "RemoteEngine []", out.stdout
