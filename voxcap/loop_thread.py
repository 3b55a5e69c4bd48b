"""A thread with its own asyncio event loop, for code that serves or connects while the rest of
voxcap runs on ordinary threads (the caption server, the OBS caption sender).

    thread = LoopThread(main, name="voxcap-share", what="the caption server")
    thread.start()                  # returns once ``main()`` runs on the loop (False: it did not)
    thread.call_soon(fn, *args)     # from any thread: ``fn(*args)`` on the loop; False once it ended
    thread.run(coro, timeout=5)     # a coroutine on the loop, its result (or exception) here
    thread.join(timeout)            # after ``main`` returned: the loop is closed

``main`` is a coroutine function; when it returns or raises, the loop's async generators are
shut down and the loop is closed. An exception from ``main`` is logged with ``what`` (the
thread then ends as if ``main`` had returned): what runs on a loop thread never takes the
process down. Calls from other threads after the end are dropped silently, as an event posted
while the server stops is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class LoopThread:
    def __init__(self, main: Callable[[], Awaitable[object]], *, name: str, what: str,
                 logger: logging.Logger | None = None) -> None:
        self._main = main
        self.what = what
        self._log = logger or log
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    # ------------------------------------------------------------------ life cycle ----
    def start(self, timeout: float = 5.0) -> bool:
        """Start the thread; True once ``main`` runs on its loop (within ``timeout``)."""
        self._thread.start()
        return self._running.wait(timeout)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end; True if it did (or never started)."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop while it is open, else None."""
        loop = self._loop
        return loop if loop is not None and not loop.is_closed() else None

    # --------------------------------------------------------------- any thread ----
    def call_soon(self, fn: Callable, *args) -> bool:
        """``fn(*args)`` on the loop, soon; False (nothing done) when the loop is not open."""
        loop = self.loop
        if loop is None:
            return False
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # closed between the check and the call
            return False
        return True

    def run(self, coro, timeout: float | None = None):
        """Run ``coro`` on the loop and return its result here (raises its exception, or
        TimeoutError after ``timeout``; RuntimeError when the loop is not open)."""
        loop = self.loop
        if loop is None:
            coro.close()
            raise RuntimeError(f"{self.what} is not running")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    # ------------------------------------------------------------------- thread ----
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop

        async def main():
            self._running.set()
            return await self._main()
        try:
            loop.run_until_complete(main())
        except Exception:  # noqa: BLE001 - logged; the rest of voxcap goes on without it
            self._log.exception("%s failed", self.what)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
