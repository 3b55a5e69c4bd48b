"""What every engine offers the rest of the app (in-process vLLM, a remote vLLM server...).

Engines publish the plain events of ``voxcap.events`` to the ``on_event`` callback given at
construction (called on the engine's own thread: consumers must be quick, e.g. an EventHub),
or to ``engine.events`` (a queue.Queue) when none is given.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..events import EngineFailed, EngineReady
from .stats import EngineStats


@runtime_checkable
class CaptionEngine(Protocol):
    stats: EngineStats
    ready_info: EngineReady | None
    failure: EngineFailed | None

    def start(self) -> CaptionEngine:
        """Validate settings (raise VoxcapError at once if bad), then start in the background."""

    def wait_ready(self, timeout: float | None = None) -> EngineReady:
        """Block until ready; raise EngineError (message + fix) on failure or timeout."""

    @property
    def is_ready(self) -> bool: ...

    def open_stream(self, label: str = "") -> str:
        """A new caption stream; raises EngineError when not ready or all slots are busy."""

    def push_audio(self, stream_id: str, samples: np.ndarray) -> None:
        """float32 16 kHz mono, any block size; thread-safe and non-blocking."""

    def close_stream(self, stream_id: str) -> None:
        """End of audio: flush the delayed words, then StreamFinished('flushed')."""

    def abort_stream(self, stream_id: str) -> None:
        """Stop now, no flush: StreamFinished('aborted')."""

    def wait_stream(self, stream_id: str, timeout: float | None = None) -> bool: ...

    def open_stream_ids(self) -> list[str]: ...

    def shutdown(self, timeout: float = 30.0) -> None:
        """Abort open streams and release everything; safe to call twice."""
