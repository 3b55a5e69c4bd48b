"""What a screen reader hears around F6 (the real app on the scripted engine, keys typed through
XTest, heard over AT-SPI from another process): the pause said at once and its state once, not
"Paused: paused: …" two or three times in the same millisecond; the Start button's name says
what pressing it does; an engine restart said once, the main window shown or hidden."""

from __future__ import annotations

import time

import pytest
from support.atspi import pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def _said(listener, since: int) -> list[str]:
    return [ev["data"] for ev in listener.events[since:] if ev["type"] == "object:announcement"]


def _button_names(tree: dict) -> list[str]:
    return [n.get("name", "") for n in walk(tree) if n.get("role") == "push button"]


def test_f6_is_said_at_once_and_the_paused_state_once(tmp_path):
    with atspi_app_ready(tmp_path) as (_x, bus, listener, app):
        assert "Start captioning" in _button_names(bus.dump(app.pid))
        app.send("caption")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Captioning"), 30), listener.events
        tree = until(lambda: bus.dump(app.pid), lambda t: "Stop captioning" in _button_names(t))
        assert "Stop captioning" in _button_names(tree), _button_names(tree)

        since = len(listener.events)
        bus.keys("at:300,300", "F6")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Paused"), 20), _said(listener, since)
        time.sleep(1.5)  # anything said late about the same state
        said = _said(listener, since)
        print("said after F6:", said)
        assert said[0].startswith("Pausing"), said  # the key is answered before the pause is done
        paused = [s for s in said if "paused" in s.casefold()]
        assert len(paused) == 1, said  # the state once...
        assert "paused: paused" not in paused[0].casefold(), paused  # ...without the word twice
        assert not [s for s in said if "stopped after" in s], said  # asked for, nothing lost


@pytest.mark.parametrize(("captioning", "hidden"), [(True, False), (True, True), (False, True)],
                         ids=["captioning", "window-hidden", "window-hidden-not-captioning"])
def test_an_engine_restart_and_its_error_are_each_said_once(tmp_path, captioning, hidden):
    """The main window hidden (to the tray), the overlay alone on screen says the restart, not
    the hidden window's engine status too; with nothing captioned it promises no audio kept."""
    with atspi_app_ready(tmp_path) as (_x, _bus, listener, app):
        if captioning:
            app.send("caption")
            assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and ev["data"].startswith("Captioning"), 30), listener.events
        if hidden:
            app.send("hide")
        since = len(listener.events)
        app.send("fail")  # the engine restarts; the new one fails to start
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and "Engine error" in ev["data"], 30), _said(listener, since)
        time.sleep(1.5)
        said = _said(listener, since)
        print("said after the restart:", said)
        assert len([s for s in said if "restarting" in s.casefold()]) == 1, said
        assert len([s for s in said if "Engine error" in s]) == 1, said
        if not captioning:  # nothing is captured: no audio is kept
            assert not [s for s in said if "audio is kept" in s], said
