"""A source with no sound, as a screen reader hears it (the real app on the scripted engine and
fake audio, heard over AT-SPI from another process): the level bars named with their levels,
the notice said once, the overlay showing it until the sound returns."""

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


def _said(listener, since: int) -> list[str]:
    return [ev["data"] for ev in listener.events[since:] if ev["type"] == "object:announcement"]


def _names(tree: dict, role: str) -> list[str]:
    return [n.get("name", "") for n in walk(tree) if n.get("role") == role]


def _texts(tree: dict) -> str:
    return " | ".join(f"{n.get('name', '')} {n.get('description', '')}" for n in walk(tree))


def test_a_silent_microphone_is_said_once_and_shown_until_its_sound_returns(tmp_path):
    with atspi_app_ready(tmp_path) as (x, bus, listener, app):
        app.send("caption")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Captioning"), 30), listener.events
        tree = until(lambda: bus.dump(app.pid),
                     lambda t: len([n for n in _names(t, "progress bar") if "input level" in n]) == 2)
        bars = sorted(n for n in _names(tree, "progress bar") if "input level" in n)
        print("level bars:", bars)
        assert bars[0].startswith("Them input level, ") and bars[0].endswith(" dB"), bars
        assert bars[1].startswith("You input level, ") and bars[1].endswith(" dB"), bars

        since = len(listener.events)
        app.send("silent")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and NOTICE in ev["data"], 20), _said(listener, since)
        time.sleep(1.5)  # anything said late about it
        said = _said(listener, since)
        print("said:", said)
        assert len([s for s in said if "no sound" in s]) == 1, said
        (notice,) = [s for s in said if "no sound" in s]
        assert "is it muted? Unmute it in the sound settings, or choose one in the Source list" in notice
        tree = until(lambda: bus.dump(app.pid), lambda t: "You input level, silent" in _names(
            t, "progress bar"))
        assert "You input level, silent" in _names(tree, "progress bar")
        assert NOTICE in _texts(tree), _texts(tree)  # the window's notice...
        assert "You: no sound for 3 s — microphone muted?" in _texts(tree)  # ...the overlay's band
        if SHOTS:
            x.screenshot(str(Path(SHOTS) / "no-sound-window-and-overlay.png"))

        since = len(listener.events)
        app.send("sound")
        tree = until(lambda: bus.dump(app.pid), lambda t: "no sound" not in _texts(t))
        assert "no sound" not in _texts(tree)
        time.sleep(1.0)
        assert not [s for s in _said(listener, since) if "sound" in s], _said(listener, since)
