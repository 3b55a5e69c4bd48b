"""Build the engine a setting asks for: in-process vLLM or a remote server, with rollover.

Every front end (CLI, GUI) goes through ``build_engine`` so that long sessions roll over the
same way everywhere; ``voxcap bench`` alone uses a bare engine, to measure vLLM itself.
"""

from __future__ import annotations

from collections.abc import Callable

from .rollover import RollingEngine, RolloverPolicy
from .settings import InProcessSettings


def bare_engine(settings, on_event: Callable | None = None, verbose: bool = False):
    """A LocalEngine for InProcessSettings, a RemoteEngine for RemoteSettings (not started)."""
    if isinstance(settings, InProcessSettings):
        from .inprocess.engine import LocalEngine

        return LocalEngine(settings, on_event=on_event, verbose=verbose)
    from .remote.engine import RemoteEngine

    return RemoteEngine(settings, on_event=on_event, verbose=verbose)


def build_engine(settings, on_event: Callable | None = None, verbose: bool = False,
                 rollover: RolloverPolicy | None = None) -> RollingEngine:
    """The engine for captioning: ``bare_engine`` wrapped in session rollover (not started)."""
    return RollingEngine(lambda sink: bare_engine(settings, sink, verbose),
                         policy=rollover or RolloverPolicy(), on_event=on_event)
