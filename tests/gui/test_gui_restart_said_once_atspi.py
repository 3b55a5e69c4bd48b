"""An engine restart while the main window is hidden (to the tray: the overlay alone on screen),
heard over AT-SPI from another process as a screen reader hears it: said once, not by both the
hidden window's engine status and the overlay."""

from __future__ import annotations

import time

import pytest
from support.atspi import pyatspi_available
from support.atspi_session import atspi_app_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def _said(listener, since: int) -> list[str]:
    return [ev["data"] for ev in listener.events[since:] if ev["type"] == "object:announcement"]


@pytest.mark.parametrize("captioning", [True, False], ids=["captioning", "not-captioning"])
def test_a_restart_with_the_window_hidden_is_said_once(tmp_path, captioning):
    with atspi_app_ready(tmp_path) as (_x, _bus, listener, app):
        if captioning:
            app.send("caption")
            assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and ev["data"].startswith("Captioning"), 30), listener.events
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
