"""Every engine declares the whole CaptionEngine protocol and implements each member itself (or
through EngineBase): no caller needs a private attribute or a hasattr check. No vLLM needed."""

from __future__ import annotations

import inspect

import pytest

from voxcap.engine.base import CaptionEngine, EngineBase, new_stream_id
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.remote.engine import RemoteEngine
from voxcap.engine.rollover import RollingEngine

MEMBERS = [name for name in dir(CaptionEngine)
           if not name.startswith("_") and (inspect.isfunction(getattr(CaptionEngine, name))
                                            or isinstance(getattr(CaptionEngine, name), property))]


def test_the_protocol_names_what_callers_use():
    assert {"first_step_samples", "engine_pids", "open_stream_ids", "wait_stream", "is_ready",
            "shutdown", "start", "wait_ready", "settings", "ready_info", "failure"} <= set(MEMBERS)
    assert {"events", "stats"} <= set(CaptionEngine.__annotations__)


@pytest.mark.parametrize("cls", [LocalEngine, RemoteEngine, RollingEngine])
def test_each_engine_declares_and_implements_every_member(cls):
    assert CaptionEngine in cls.__mro__  # declared, not only shaped alike
    for name in MEMBERS:
        own = inspect.getattr_static(cls, name)
        assert own is not inspect.getattr_static(CaptionEngine, name), \
            f"{cls.__name__}.{name} is only the protocol's stub"


def test_local_and_remote_share_the_base():
    assert issubclass(LocalEngine, EngineBase) and issubclass(RemoteEngine, EngineBase)
    for name in ("wait_ready", "shutdown", "open_stream", "push_audio", "close_stream",
                 "abort_stream", "_thread_main", "_emit", "_fail"):
        assert name not in vars(LocalEngine) and name not in vars(RemoteEngine), name


def test_stream_ids_are_unique_in_the_process():
    ids = {new_stream_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(i.startswith("s") for i in ids)
