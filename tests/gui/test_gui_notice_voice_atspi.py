"""A notice the overlay's band only shows (``said_by_notice``: no audio, no captions, no sound)
is spoken once by a window on the screen, as a screen reader hears it over AT-SPI from another
process (the real app on the scripted engine and fake audio): by the main window's notice line
while that is shown; by the overlay while the main window is hidden to the tray, where a screen
reader may not voice the hidden window's line (before, only the hidden window said it)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support.atspi import pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]
SHOTS = os.environ.get("VOXCAP_SHOTS")
NOTICE = "You: no sound from the microphone for 3 s"
NO_CAPTIONS = "Them: speech, but no captions for 8 s"


def _heard(listener, since: int, words: str) -> list[tuple[str, str, str]]:
    """(role, name, text) of each announcement with ``words`` since event ``since``."""
    return [(ev["role"], ev["name"], ev["data"]) for ev in listener.events[since:]
            if ev["type"] == "object:announcement" and words in ev["data"]]


def _level_bars(tree: dict) -> list[str]:
    return [n.get("name", "") for n in walk(tree)
            if n.get("role") == "progress bar" and "input level" in n.get("name", "")]


@pytest.mark.parametrize("hidden", [False, True], ids=["window-shown", "window-hidden"])
def test_a_notice_the_band_shows_is_said_once_by_a_window_on_screen(tmp_path, hidden):
    with atspi_app_ready(tmp_path) as (x, bus, listener, app):
        app.send("caption")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Captioning"), 30), listener.events
        until(lambda: bus.dump(app.pid), lambda t: len(_level_bars(t)) == 2)  # sound arrives
        if hidden:
            app.send("hide")
        for command, words in (("silent", NOTICE), ("watch missing", NO_CAPTIONS)):
            since = len(listener.events)
            app.send(command)
            assert listener.wait_for(lambda ev, w=words: ev["type"] == "object:announcement"
                                     and w in ev["data"], 20), [
                e for e in listener.events[since:] if e["type"] == "object:announcement"]
            time.sleep(1.5)  # anything said late about it
            heard = _heard(listener, since, words)
            print(command, "heard:", heard)
            assert len(heard) == 1, heard
            role, name, text = heard[0]
            if hidden:  # the overlay, with the notice's fix
                assert name == "Live captions", heard
            else:
                assert role == "label" and name == text, heard  # the notice line
            if SHOTS and hidden:
                x.screenshot(str(Path(SHOTS) / f"window-hidden-{command.split()[0]}.png"))
