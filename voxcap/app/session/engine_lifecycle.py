"""The engine's life: start, the restart policy, restart (the old engine settled and shut down
first), readiness, shutdown.

Each engine started gets a new generation; the news of a replaced one's life (its progress,
ready, failure, stop) is not passed on, and what it would have set off is ignored. Readiness is
waited for on a thread of its own; ``on_ready(gen)`` and ``on_failed(gen, event)`` are submitted
to the controller's thread (``on_failed`` gets ``None`` for an engine that could not even start).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from ...engine.base import CaptionEngine
from ...engine.remote.settings import RemoteSettings
from ...engine.settings import InProcessSettings, changes_that_apply
from ...errors import EngineError, VoxcapError
from ...events import AppProblem, EngineFailed, EngineProgress, EngineReady, EngineStopped

log = logging.getLogger(__name__)
SETTLE_S = 600.0  # an in-process engine still starting is let finish this long before it is stopped
LIFE_NEWS = (EngineProgress, EngineReady, EngineFailed, EngineStopped)


def default_engine_factory(verbose: bool = False):
    def make(settings, on_event):
        from ...engine.factory import build_engine

        return build_engine(settings, on_event=on_event, verbose=verbose)
    return make


class EngineLifecycle:
    def __init__(self, factory: Callable, route: Callable[[object], None], submit: Callable,
                 on_ready: Callable, on_failed: Callable, closing: threading.Event) -> None:
        self._factory = factory
        self._route = route  # where the engine's events go (on its thread)
        self._submit = submit
        self._on_ready = on_ready
        self._on_failed = on_failed
        self._closing = closing  # quitting: nothing is started, nothing waited for
        self.engine: CaptionEngine | None = None
        self.settings: InProcessSettings | RemoteSettings | None = None
        self.generation = 0

    @property
    def ready(self) -> bool:
        eng = self.engine
        return eng is not None and eng.is_ready

    def current(self, gen: int) -> bool:
        return gen == self.generation

    def policy(self, settings, reason: str = "") -> str:
        """What new ``settings`` call for: "start" (no engine, or only a failed one: it is
        shut down first, as a restart), "restart" (they differ from the engine's in what can
        change it: ``engine.settings.changes_that_apply``), or "" (nothing)."""
        eng = self.engine
        if eng is None:
            return "start"
        if eng.failure is not None:
            return "restart"
        if settings != self.settings:
            if changes_that_apply(self.settings, settings, getattr(eng, "on_cuda", True)):
                return "restart"
            log.info("engine not restarted for %s: it changes nothing without a CUDA GPU", reason)
        return ""

    def refusal(self, verb: str) -> AppProblem | None:
        """None while the engine runs; else why captioning cannot ``verb``, with the fix."""
        eng = self.engine
        if eng is not None and eng.failure is None:
            return None
        fail = eng.failure if eng is not None else None
        return AppProblem(f"Captioning cannot {verb}: the engine is not running"
                          + (f" ({fail.message})" if fail else "") + ".",
                          (fail.fix if fail and fail.fix else "fix the engine's problem "
                           f"shown in the status line (Settings), then {verb} again"), "engine")

    def start(self, settings) -> None:
        if self._closing.is_set():
            return
        self.generation += 1
        gen = self.generation
        self.settings = settings
        try:
            eng = self._factory(settings, self._sink(gen))
            eng.start()  # bad settings, missing model: raised here at once
        except VoxcapError as exc:
            self.engine = None
            self._route(EngineFailed(exc.message, exc.fix))
            self._on_failed(gen, None)
            return
        self.engine = eng
        threading.Thread(target=self._await_ready, args=(eng, gen), daemon=True,
                         name="voxcap-engine-wait").start()

    def replace(self, settings) -> None:
        """Stop the engine (settled first) and start one with ``settings``."""
        old = self.retire()
        if old is not None:
            self._wait_settled(old, SETTLE_S)
            old.shutdown()
        self.start(settings)

    def retire(self):
        """The engine is no longer the current one (its stop is not news); returned to be shut down."""
        old, self.engine = self.engine, None
        self.generation += 1
        return old

    def shutdown(self, wait_s: float) -> None:
        """Shut the engine down; one still starting is not waited for to settle (minutes): its
        shutdown is given ``wait_s``."""
        eng = self.retire()
        if eng is not None:
            eng.shutdown(timeout=wait_s)

    def _sink(self, gen: int) -> Callable:
        def sink(event) -> None:  # on the engine's thread: quick
            if isinstance(event, LIFE_NEWS) and gen != self.generation:
                return  # a replaced engine stopping: not news
            self._route(event)
            if isinstance(event, EngineFailed):
                self._submit(self._on_failed, gen, event)
        return sink

    def _await_ready(self, eng, gen: int) -> None:
        while not self._closing.is_set() and gen == self.generation:
            try:
                eng.wait_ready(0.25)
            except EngineError:
                if eng.failure is not None:
                    return  # EngineFailed was published by the engine
                continue
            self._submit(self._on_ready, gen)
            return

    def _wait_settled(self, eng, timeout: float) -> None:
        """An engine still starting cannot be stopped cleanly: let it finish (or fail) first.
        One that can (``stops_while_starting``: the remote engine waiting for its server) is
        not waited for."""
        if getattr(eng, "stops_while_starting", False):
            return
        deadline = time.monotonic() + timeout
        while (eng.failure is None and not eng.is_ready and time.monotonic() < deadline
               and not self._closing.is_set()):  # quitting does not wait
            with contextlib.suppress(EngineError):
                eng.wait_ready(0.25)
