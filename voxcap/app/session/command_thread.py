"""The controller's own thread: its commands run there one after the other, so no two of them
ever overlap. A command that fails is reported as ``AppProblem`` (a ``VoxcapError`` with its
fix, anything else as an internal error) and the next one runs; one that returns ``EXIT`` ends
the thread."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from ...errors import VoxcapError
from ...events import AppProblem

log = logging.getLogger(__name__)
EXIT = "exit"  # a command's return value that ends the thread (shutdown)


class CommandThread:
    def __init__(self, emit: Callable[[object], None], name: str = "voxcap-controller") -> None:
        self._emit = emit
        self._cmds: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable, *args) -> None:
        """Run ``fn(*args)`` after the commands already submitted (any thread)."""
        self._cmds.put((fn, args))

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            fn, args = self._cmds.get()
            try:
                if fn(*args) == EXIT:
                    return
            except VoxcapError as exc:
                log.warning("%s: %s", getattr(fn, "__name__", fn), exc.message, exc_info=True)
                self._emit(AppProblem(exc.message, exc.fix, "engine"))
            except Exception as exc:
                log.exception("the session controller failed in %s", getattr(fn, "__name__", fn))
                self._emit(AppProblem(f"Internal error: {exc!r}", "please report it (Help > "
                                      "Copy diagnostics, or the log file)", "app"))
