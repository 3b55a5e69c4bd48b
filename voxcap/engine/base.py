"""What every engine offers the rest of the app (``CaptionEngine``), and the plumbing the
in-process and the remote engine share (``EngineBase``).

Engines publish the plain events of ``voxcap.events`` to the ``on_event`` callback given at
construction (called on the engine's own thread: consumers must be quick, e.g. an EventHub),
or to ``engine.events`` (a queue.Queue) when none is given.

``EngineBase`` runs an engine on its own thread with its own asyncio loop: start, readiness,
failure (reported once, as ``EngineFailed``), shutdown, thread-safe calls into the loop, and
stream ids. A subclass supplies ``_run`` (start up, ``_set_ready``, serve until
``_stop_async``) and the per-stream coroutines ``_open``/``_push``/``_close``/``_abort``.

Stream ids are unique in the process, not per engine: journals and captions key on them, and a
restarted engine (a settings change inside one journal session) must not hand out "s1" again.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import EngineError, VoxcapError
from ..events import EngineFailed, EngineProgress, EngineReady, Event
from ..setting_refs import ref
from .stats import EngineStats

log = logging.getLogger(__name__)
LONG_WAIT_S = 5.0  # a shutdown given this long that is still running is worth a warning
EventSink = Callable[[Event], None]
_STREAM_IDS = itertools.count(1)


def new_stream_id() -> str:
    """A stream id never handed out before in this process ("s1", "s2", ...)."""
    return f"s{next(_STREAM_IDS)}"


@runtime_checkable
class CaptionEngine(Protocol):
    events: queue.Queue  # the events, when no on_event callback was given
    stats: EngineStats

    # read-only to the engine's users (the rolling engine passes on its inner engine's)
    @property
    def settings(self) -> Any:  # InProcessSettings / RemoteSettings
        ...

    @property
    def ready_info(self) -> EngineReady | None: ...

    @property
    def failure(self) -> EngineFailed | None: ...

    def start(self) -> CaptionEngine:
        """Validate settings (raise VoxcapError at once if bad), then start in the background."""

    def wait_ready(self, timeout: float | None = None) -> EngineReady:
        """Block until ready; raise EngineError (message + fix) on failure or timeout."""

    @property
    def is_ready(self) -> bool: ...

    @property
    def first_step_samples(self) -> int:
        """Audio samples a session's first step needs (9,000 at the default delay); each further
        step needs 1,280. Known once ready."""

    def open_stream(self, label: str = "") -> str:
        """A new caption stream; raises EngineError when not ready or all slots are busy."""

    def push_audio(self, stream_id: str, samples: np.ndarray) -> None:
        """float32 16 kHz mono, any block size; thread-safe and non-blocking."""

    def close_stream(self, stream_id: str) -> None:
        """End of audio: flush the delayed words, then StreamFinished('flushed')."""

    def abort_stream(self, stream_id: str) -> None:
        """Stop now, no flush: StreamFinished('aborted')."""

    def wait_stream(self, stream_id: str, timeout: float | None = None) -> bool:
        """Wait until a stream finished (True) or the timeout passed (False)."""

    def open_stream_ids(self) -> list[str]:
        """The streams not finished yet."""

    def engine_pids(self) -> list[int]:
        """Processes the engine started (they die with it); [] when it starts none."""

    def shutdown(self, timeout: float = 30.0) -> None:
        """Abort open streams and release everything; safe to call twice."""


class EngineBase(CaptionEngine):
    """Thread, loop, readiness, failure and event plumbing of a ``CaptionEngine``."""

    thread_name = "voxcap-engine"
    what = "The engine"  # how messages name it
    stops_while_starting = False  # whether shutdown() during start-up is clean (else: wait)
    # plain attributes here (set in __init__): class values, so that they hide the protocol's
    # read-only properties, which would refuse the assignment
    settings: Any = None
    ready_info: EngineReady | None = None
    failure: EngineFailed | None = None

    def __init__(self, settings, on_event: EventSink | None = None, verbose: bool = False) -> None:
        self.settings = settings
        self.events: queue.Queue[Event] = queue.Queue()
        self._sink: EventSink = on_event or self.events.put
        self._verbose = verbose
        self.stats = EngineStats()
        self.ready_info: EngineReady | None = None
        self.failure: EngineFailed | None = None
        self._first_step_samples = 0
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_async: asyncio.Event | None = None
        self._streams: dict = {}  # stream id -> the subclass's stream state (has ``done``)
        self._t0 = 0.0

    @property
    def on_cuda(self) -> bool:
        """Whether CUDA-only settings (settings.CUDA_ONLY) can change this engine."""
        return True

    # ---------------------------------------------------------------- life cycle ----
    def start(self):
        """Validate the settings now (raising VoxcapError), then start in the background."""
        self._prepare()
        self._t0 = time.perf_counter()
        log.info("%s starting (%s)", self.what, type(self).__name__)
        self._thread = threading.Thread(target=self._thread_main, name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def wait_ready(self, timeout: float | None = None) -> EngineReady:
        if not self._ready.wait(timeout):
            raise EngineError(*self._start_timeout(timeout))
        if self.failure is not None:
            raise EngineError(self.failure.message, self.failure.fix)
        if self.ready_info is None:  # shut down while it started (stops_while_starting)
            raise EngineError(f"{self.what} was stopped before it was ready.", "start it again")
        return self.ready_info

    @property
    def is_ready(self) -> bool:
        return self.ready_info is not None and self.failure is None and not self._stopped.is_set()

    @property
    def first_step_samples(self) -> int:
        return self._first_step_samples

    def shutdown(self, timeout: float = 30.0) -> None:
        if self._stop_async is not None and not self._stopped.is_set():
            self._call_soon(self._stop_async.set)
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                # a quitting app gives it a moment only (QUIT_ENGINE_WAIT_S): not a problem then
                log.log(logging.WARNING if timeout >= LONG_WAIT_S else logging.INFO,
                        "%s did not stop within %.0f s", self.what, timeout)
                self._left_running()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def engine_pids(self) -> list[int]:
        return []

    # ------------------------------------------------------------------ streams ----
    def open_stream(self, label: str = "") -> str:
        """Start a new caption stream; returns its id. Thread-safe."""
        self._require_ready()
        assert self._loop is not None  # set before the engine is ready
        stream_id = new_stream_id()
        fut = asyncio.run_coroutine_threadsafe(self._open(stream_id, label), self._loop)
        fut.result(timeout=10)
        log.info("stream %s opened (%s)", stream_id, label or "no label")
        return stream_id

    def push_audio(self, stream_id: str, samples: np.ndarray) -> None:
        """Queue 16 kHz mono samples (any block size) for a stream. Thread-safe, non-blocking."""
        chunk = self._audio_chunk(samples)
        if chunk.size:
            self._call_soon(self._push, stream_id, chunk)

    def close_stream(self, stream_id: str) -> None:
        """End of audio: the model flushes its delayed words, then StreamFinished('flushed')."""
        self._call_soon(self._close, stream_id)

    def abort_stream(self, stream_id: str) -> None:
        """Stop a stream now (no flush) and free its slot; StreamFinished('aborted')."""
        self._call_soon(lambda: asyncio.ensure_future(self._abort(stream_id)))

    def wait_stream(self, stream_id: str, timeout: float | None = None) -> bool:
        st = self._streams.get(stream_id)
        return True if st is None else st.done.wait(timeout)

    def open_stream_ids(self) -> list[str]:
        return [s for s, st in list(self._streams.items()) if not st.done.is_set()]

    def _require_ready(self) -> None:
        if self.failure is not None:
            raise EngineError(self.failure.message, self.failure.fix)
        if not self.is_ready:
            raise EngineError(f"{self.what} is not ready yet.", "wait for the 'ready' status")

    def _call_soon(self, fn, *args) -> None:
        """Run ``fn(*args)`` on the engine's loop (from any thread); nothing once it stopped."""
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop already closed: the engine stopped
            log.debug("%s stopped: %s dropped", self.what, getattr(fn, "__name__", fn))

    # ------------------------------------------------------------ engine thread ----
    def _emit(self, event: Event) -> None:
        try:
            self._sink(event)
        except Exception:  # a broken consumer must not kill the engine
            log.exception("an event consumer failed on %s", type(event).__name__)

    def _progress(self, stage: str, detail: str = "", note: str = "") -> None:
        log.info("%s: %s %s%s", self.what, stage, detail, f" ({note})" if note else "")
        self._emit(EngineProgress(stage, detail, time.perf_counter() - self._t0, note))

    def _fail(self, message: str, fix: str = "") -> None:
        if self.failure is None:
            log.error("%s failed: %s (fix: %s)", self.what, message, fix)
            self.failure = EngineFailed(message, fix)
            self._emit(self.failure)
        self._ready.set()

    def _set_ready(self, info: EngineReady, detail: str) -> None:
        self.ready_info = info
        self._progress("ready", detail)
        self._emit(info)
        self._ready.set()

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except VoxcapError as exc:
            log.info("%s stopped on an error", self.what, exc_info=True)
            self._fail(exc.message, exc.fix)
        except BaseException as exc:  # reported, never a silent hang
            log.exception("%s failed", self.what)
            self._fail(*self._explain(exc))
        finally:
            self._stopped.set()
            self._ready.set()
            for st in list(self._streams.values()):
                st.done.set()
            self._cleanup()
            log.info("%s stopped", self.what)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_async = asyncio.Event()
        await self._run()

    async def _stop_requested(self) -> None:
        """Returns once shutdown() is called (on the engine's loop, which _main started)."""
        assert self._stop_async is not None
        await self._stop_async.wait()

    # ------------------------------------------------------------ subclass hooks ----
    def _prepare(self) -> None:
        """Check the settings before the thread starts (raise VoxcapError)."""

    def _start_timeout(self, timeout: float | None) -> tuple[str, str]:
        return (f"{self.what} did not start within {timeout:.0f} s.",
                "look at the log above; a first start compiles for minutes")

    def _explain(self, exc: BaseException) -> tuple[str, str]:
        """A person's reading of an unexpected exception: (message, fix)."""
        return (f"{self.what} failed ({type(exc).__name__}).",
                ref("verbose"))

    def _audio_chunk(self, samples: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(samples, dtype=np.float32).reshape(-1).copy()

    def _cleanup(self) -> None:
        """On the engine thread, after it stopped (temporary files, environment)."""

    def _left_running(self) -> None:
        """On the caller's thread, when shutdown() gave up waiting: the app may quit without the
        engine thread, so what must not outlive the process goes now."""

    async def _run(self) -> None:
        raise NotImplementedError

    async def _open(self, stream_id: str, label: str) -> None:
        raise NotImplementedError

    def _push(self, stream_id: str, chunk: np.ndarray) -> None:
        raise NotImplementedError

    def _close(self, stream_id: str) -> None:
        raise NotImplementedError

    async def _abort(self, stream_id: str) -> None:
        raise NotImplementedError
