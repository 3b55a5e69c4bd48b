"""Deterministic stand-ins for the engine and the sound server, for GUI and controller tests.

``ScriptedEngine`` behaves like a CaptionEngine (start stages, ready, streams, flush, stats
measured by the real ``EngineStats``): every 80 ms of audio pushed gives one TextDelta whose
text is the next piece of a script, on the engine's own thread. ``FakeAudio`` resolves sources
without a sound server; ``feed(label, seconds)`` delivers that much audio as 20 ms blocks.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from typing import ClassVar

import numpy as np

from voxcap.capture.devices import DeviceInfo
from voxcap.capture.sources import parse_sources
from voxcap.engine.stats import EngineStats
from voxcap.errors import CaptureError, EngineError, ModelDirError
from voxcap.events import (
    AudioBlock,
    CaptureStarted,
    CaptureStopped,
    DevicesChanged,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineStopped,
    StreamFinished,
    TextDelta,
)

STEP = 1280
SCRIPT = ("hello", "there", "this", "is", "a", "scripted", "caption", "stream", "for", "tests.")
_IDS = itertools.count(1)


class ScriptedEngine:
    instances: ClassVar[list] = []

    def __init__(self, settings, on_event, start_s: float = 0.05, fail_start: str = "",
                 flush_s: float = 0.0, script: tuple[str, ...] | None = None) -> None:
        self.settings = settings
        self.script = SCRIPT if script is None else script  # the words it says, in turn (SCRIPT read now)
        self._sink = on_event
        self.stats = EngineStats()
        self.ready_info = None
        self.failure = None
        self.start_s = start_s
        self.fail_start = fail_start
        self.flush_s = flush_s  # how long a flush takes (the real model's delayed words)
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._work: queue.Queue = queue.Queue()
        self._streams: dict[str, dict] = {}
        self._thread = None
        self.shutdown_called = False
        ScriptedEngine.instances.append(self)

    # -------------------------------------------------------------------- life cycle ----
    def start(self):
        if getattr(self.settings, "model_dir", "") == "/missing":
            raise ModelDirError("Model directory does not exist: /missing", "pick the model folder")
        self._thread = threading.Thread(target=self._main, daemon=True, name="fake-engine")
        self._thread.start()
        return self

    def _main(self) -> None:
        t0 = time.perf_counter()
        for stage in ("importing", "loading weights", "compiling"):
            self._sink(EngineProgress(stage, "", time.perf_counter() - t0))
            time.sleep(self.start_s / 3)
        if self.fail_start:
            self.failure = EngineFailed(self.fail_start, "a fix")
            self._sink(self.failure)
            self._ready.set()
            return
        mode = getattr(self.settings, "graph_mode", "NONE")
        self.ready_info = EngineReady(mode, mode, (1, 2), time.perf_counter() - t0, "fake", 480,
                                      getattr(self.settings, "max_model_len", 8192), 2)
        self._sink(self.ready_info)
        self._ready.set()
        while True:
            item = self._work.get()
            if item is None:
                break
            item()
        self._stopped.set()
        self._sink(EngineStopped())

    def wait_ready(self, timeout=None):
        if not self._ready.wait(timeout):
            raise EngineError("not ready yet", "")
        if self.failure is not None:
            raise EngineError(self.failure.message, self.failure.fix)
        return self.ready_info

    @property
    def is_ready(self) -> bool:
        return self.ready_info is not None and self.failure is None and not self._stopped.is_set()

    def shutdown(self, timeout: float = 30.0) -> None:
        self.shutdown_called = True
        for sid in list(self._streams):
            self.abort_stream(sid)
        self._work.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    # ----------------------------------------------------------------------- streams ----
    def open_stream(self, label: str = "") -> str:
        if not self.is_ready:
            raise EngineError("The engine is not ready yet.", "")
        sid = f"f{next(_IDS)}"
        self._streams[sid] = {"buf": np.zeros(0, np.float32), "steps": 0, "samples": 0,
                              "done": threading.Event(), "label": label, "closing": False}
        self.stats.open(sid, STEP, STEP)
        return sid

    def push_audio(self, stream_id: str, samples) -> None:
        chunk = np.asarray(samples, dtype=np.float32).reshape(-1).copy()
        self._work.put(lambda: self._push(stream_id, chunk))

    def _push(self, sid: str, chunk) -> None:
        st = self._streams.get(sid)
        if st is None or st["closing"]:
            return
        self.stats.audio_in(sid, chunk.size)
        st["samples"] += chunk.size
        st["buf"] = np.concatenate([st["buf"], chunk])
        while st["buf"].size >= STEP:
            st["buf"] = st["buf"][STEP:]
            self._step(sid, st)

    def _step(self, sid: str, st: dict) -> None:
        k = st["steps"]
        st["steps"] += 1
        self.stats.prompt_sent(sid)
        self.stats.engine_step("FULL")
        self.stats.token_back(sid, 1)
        text = f" {self.script[(k // 2) % len(self.script)]}" if k % 2 == 0 else ""
        self._sink(TextDelta(sid, text, (k,), k, k * 0.08, (k + 1) * 0.08, time.time()))

    def close_stream(self, stream_id: str) -> None:
        self._work.put(lambda: self._finish(stream_id, "flushed"))

    def abort_stream(self, stream_id: str) -> None:
        self._work.put(lambda: self._finish(stream_id, "aborted"))

    def _finish(self, sid: str, reason: str) -> None:
        st = self._streams.get(sid)
        if st is None:
            return
        if reason == "flushed":
            if self.flush_s:
                time.sleep(self.flush_s)
            self._step(sid, st)  # the delayed last piece
        self._streams.pop(sid, None)  # only now: wait_stream() waits for the piece above
        self.stats.finish(sid)
        self._sink(StreamFinished(sid, reason, st["steps"], st["samples"] / 16000))
        st["done"].set()
        self._done = getattr(self, "_done", {})
        self._done[sid] = st["done"]

    def wait_stream(self, stream_id: str, timeout=None) -> bool:
        st = self._streams.get(stream_id)
        if st is not None:
            return st["done"].wait(timeout)
        return True

    def open_stream_ids(self) -> list[str]:
        return list(self._streams)


def scripted_factory(**kwargs):
    def make(settings, on_event):
        return ScriptedEngine(settings, on_event, **kwargs)
    return make


# --------------------------------------------------------------------------------- audio ----
DEVICES = (
    DeviceInfo("vspeaker.monitor", "Monitor of Virtual Speaker", "monitor", True, 48000, 2),
    DeviceInfo("virtmic", "Virtual Microphone", "input", True, 48000, 1),
)


class FakeCapture:
    def __init__(self, spec, on_block, on_event) -> None:
        self.spec, self.label = spec, spec.label
        self.on_block, self.on_event = on_block, on_event
        self.stopped = False
        self.delivered = 0

    def feed(self, seconds: float, level: float = 0.1) -> None:
        n_blocks = round(seconds / 0.02)
        now = time.time()
        rng = np.random.default_rng(len(self.label))
        for i in range(n_blocks):
            samples = (rng.standard_normal(320) * level).astype(np.float32)
            self.on_block(AudioBlock(self.label, samples, now - seconds + i * 0.02))
            self.delivered += 320

    def feed_samples(self, samples, block: int = 320) -> None:
        """Given 16 kHz audio, as 20 ms blocks stamped as if just captured in real time."""
        now = time.time() - samples.size / 16000
        for i in range(0, samples.size, block):
            self.on_block(AudioBlock(self.label, samples[i:i + block].astype(np.float32),
                                     now + i / 16000))
            self.delivered += min(block, samples.size - i)

    def stop(self):
        if not self.stopped:
            self.stopped = True
            self.on_event(CaptureStopped(self.label, self.delivered / 16000, 0, 0, 0.0, 0,
                                         f"{self.label}: stopped"))


class FakeAudio:
    def __init__(self) -> None:
        self.captures: dict[str, FakeCapture] = {}

    def resolve(self, source: str):
        out = []
        for spec in parse_sources(source):
            if spec.kind == "system":
                out.append((spec, DEVICES[0].description))
            elif spec.kind == "mic":
                out.append((spec, DEVICES[1].description))
            elif spec.kind == "app":
                out.append((spec, f"{spec.name} (application)"))
            else:
                dev = next((d for d in DEVICES if spec.name.lower() in d.description.lower()), None)
                if dev is None:
                    raise CaptureError(f"No capture device called {spec.name!r}.", "pick another")
                out.append((spec, dev.description))
        return out

    def open(self, spec, on_block, on_event):
        cap = FakeCapture(spec, on_block, on_event)
        self.captures[spec.label] = cap
        on_event(CaptureStarted(spec.label, "fake", "fake device", 48000, 2,
                                f"{spec.label}: capturing"))
        return cap

    def watch(self, on_event):
        on_event(DevicesChanged(DEVICES, True))

        class _W:
            def stop(self):
                pass
        return _W()

    def feed(self, label: str, seconds: float) -> None:
        self.captures[label].feed(seconds)
