"""The engine's lifecycle and restart policy (app/session/engine_lifecycle.py), with the scripted
engine; the controller's own thread is stood in for by a queue drained here."""

from __future__ import annotations

import dataclasses
import queue
import threading

from support.gui_fakes import ScriptedEngine, scripted_factory

from voxcap.app.session.engine_lifecycle import EngineLifecycle
from voxcap.engine.settings import InProcessSettings
from voxcap.events import EngineFailed, EngineProgress, EngineReady, EngineStopped


class Harness:
    def __init__(self, **engine):
        self.events, self.calls, self.failures = [], queue.Queue(), []
        self.closing = threading.Event()
        self.life = EngineLifecycle(scripted_factory(**engine), self.events.append,
                                    lambda fn, *a: self.calls.put((fn, a)), self.ready,
                                    self.failed, self.closing)

    def ready(self, gen):
        return ("ready", gen)

    def failed(self, gen, event):
        self.failures.append((gen, event))
        return ("failed", gen, event)

    def next_call(self, timeout=10.0):
        fn, args = self.calls.get(timeout=timeout)
        return fn(*args)


def _settings(mode="FULL_DECODE_ONLY", **kw):
    return InProcessSettings("/tmp/model", graph_mode=mode, max_streams=2, **kw)


def test_start_then_ready_is_submitted_for_its_generation():
    h = Harness()
    assert h.life.policy(_settings()) == "start"
    assert h.life.refusal("start").message == ("Captioning cannot start: the engine is not running.")
    h.life.start(_settings())
    assert h.next_call() == ("ready", 1)
    assert h.life.ready and h.life.refusal("start") is None
    assert any(isinstance(e, EngineReady) for e in h.events)
    h.life.shutdown(5.0)
    assert h.life.engine is None and not h.life.current(1)


def test_the_restart_policy():
    h = Harness()
    h.life.start(_settings())
    h.next_call()
    assert h.life.policy(_settings()) == ""  # the same settings
    assert h.life.policy(_settings(max_model_len=4096)) == "restart"
    h.life.engine.on_cuda = False
    assert h.life.policy(_settings("PIECEWISE")) == ""  # a graph mode changes nothing without CUDA
    h.life.engine.on_cuda = True
    assert h.life.policy(_settings("PIECEWISE")) == "restart"
    h.life.engine.failure = EngineFailed("CUDA out of memory", "a fix")
    assert h.life.policy(_settings()) == "restart"  # a failed engine is shut down first
    assert "(CUDA out of memory)" in h.life.refusal("resume").message
    assert h.life.refusal("resume").fix == "a fix"
    h.life.shutdown(5.0)


def test_a_replaced_engine_is_shut_down_and_its_news_is_not_passed_on():
    h = Harness()
    h.life.start(_settings())
    h.next_call()
    old = h.life.engine
    h.life.replace(_settings("PIECEWISE"))
    assert old.shutdown_called and h.life.engine is not old
    assert h.next_call() == ("ready", 3)  # retired (2), then started (3)
    old_news = len(h.events)
    old._sink(EngineProgress("late", "", 0.0))  # the old engine's sink, still held by it
    old._sink(EngineStopped())
    assert len(h.events) == old_news
    assert h.life.settings.graph_mode == "PIECEWISE"
    h.life.shutdown(5.0)


def test_an_engine_that_cannot_start_is_failed_at_once_and_one_that_fails_later_too():
    h = Harness()
    h.life.start(dataclasses.replace(_settings(), model_dir="/missing"))
    (failed,) = h.events
    assert isinstance(failed, EngineFailed) and "does not exist" in failed.message
    assert h.life.engine is None and h.failures == [(1, None)]  # None: it never started
    h2 = Harness(fail_start="CUDA out of memory")
    h2.life.start(_settings())
    kind, gen, event = h2.next_call()
    assert (kind, gen, event.message) == ("failed", 1, "CUDA out of memory")
    h2.life.shutdown(5.0)


def test_closing_starts_nothing():
    h = Harness()
    h.closing.set()
    made = len(ScriptedEngine.instances)
    h.life.start(_settings())
    assert h.life.engine is None and len(ScriptedEngine.instances) == made
