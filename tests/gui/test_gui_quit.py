"""Quit is quick in every state: the controller (and so the app) is down within 5 s, also while
the engine is still starting (a real start compiles for minutes) or restarting."""

from __future__ import annotations

import time

import pytest
from support.gui_fakes import FakeAudio, ScriptedEngine

from voxcap.app.controller import QUIT_ENGINE_WAIT_S, SessionController
from voxcap.engine.settings import InProcessSettings

SLOW_START_S = 60.0


def _controller(tmp_path, starts, flush_s=0.0):
    """A controller whose n-th engine takes starts[n] seconds to start."""
    starts = list(starts)

    def factory(settings, on_event):
        return ScriptedEngine(settings, on_event, start_s=starts.pop(0), flush_s=flush_s)
    audio = FakeAudio()
    ctl = SessionController(lambda ev: None, engine_factory=factory, audio=audio,
                            journal_root=tmp_path)
    ctl.start_engine(InProcessSettings("/tmp/model", max_streams=2))
    return ctl, audio


def _until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "state not reached"
        time.sleep(0.02)


def _quit_time(ctl) -> float:
    t0 = time.monotonic()
    assert ctl.shutdown(engine_wait_s=QUIT_ENGINE_WAIT_S).wait(10.0)  # as the app quits
    return time.monotonic() - t0


@pytest.mark.parametrize("state", ["off", "engine starting", "waiting", "on", "restarting",
                                   "stopping"])
def test_quit_within_5_s(tmp_path, state):
    slow = state in ("engine starting", "waiting")
    ctl, audio = _controller(tmp_path, [SLOW_START_S if slow else 0.05, SLOW_START_S],
                             flush_s=1.0 if state == "stopping" else 0.0)
    if not slow:
        _until(lambda: ctl.ready_info is not None)
    else:
        time.sleep(0.3)
    if state in ("waiting", "on", "restarting", "stopping"):
        ctl.start_captioning("both")
        _until(lambda: ctl.state == ("waiting" if slow else "on"))
        for label in list(audio.captures):
            audio.feed(label, 0.5)
    if state == "restarting":
        ctl.restart_engine(InProcessSettings("/tmp/model", graph_mode="PIECEWISE", max_streams=2))
        _until(lambda: ctl.state == "restarting")
        time.sleep(0.3)  # the new engine is starting (for a minute)
    if state == "stopping":
        ctl.stop_captioning()
        _until(lambda: ctl.state == "stopping")
    assert _quit_time(ctl) < 5.0
    assert ctl.state == "closed"
