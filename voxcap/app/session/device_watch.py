"""The sound server's devices, watched once asked for (the GUI's source list follows them):
its ``DevicesChanged`` events go out with the controller's; a watch that cannot start is
reported as ``AppProblem``."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...errors import VoxcapError
from ...events import AppProblem
from ..sources import Stoppable

log = logging.getLogger(__name__)


class DeviceWatch:
    def __init__(self, emit: Callable[[object], None]) -> None:
        self._emit = emit
        self._watcher: Stoppable | None = None

    @property
    def watching(self) -> bool:
        return self._watcher is not None

    def start(self, audio) -> None:
        """Watch ``audio``'s devices (``AudioSources.watch``); once: a second call does nothing."""
        if self._watcher is not None:
            return
        try:
            self._watcher = audio.watch(self._emit)
        except VoxcapError as exc:
            self._emit(AppProblem(exc.message, exc.fix, "capture"))

    def stop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is None:
            return
        try:
            watcher.stop()
        except Exception:
            log.warning("stopping the device watcher failed", exc_info=True)
