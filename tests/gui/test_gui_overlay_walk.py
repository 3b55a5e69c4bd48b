"""The overlay as a deaf user and a screen-reader user meet it: the real app (scripted engine,
fake audio) under Xvfb with a compositor, read over AT-SPI from another process. The overlay's
band says each state, caption lines are announced once each (not per word), speaker first, the
app is one application on the bus, and View → Move or resize overlay (pressed over AT-SPI) moves
and resizes it by keys. Screenshots for a person to look at: $VOXCAP_SHOTS or the test's folder."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support.atspi import overlay_node, pyatspi_available, until
from support.atspi_session import atspi_app_ready
from support.gui_fakes import SCRIPT

from voxcap.gui.overlay.window import KEY_STEP

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]




def test_overlay_states_announced_lines_one_app_and_keys(tmp_path):
    shots = Path(os.environ.get("VOXCAP_SHOTS", tmp_path))
    with atspi_app_ready(tmp_path) as (x, bus, listener, app):
        apps = bus.apps()
        ours = [a for a in apps if a["pid"] == app.pid]
        assert len(ours) == 1 and ours[0]["name"] == "voxcap", apps
        assert not [a for a in apps if a["windows"] == 0 and a["name"] != "main"], apps
        desc = lambda: overlay_node(bus.dump(app.pid))["description"]  # noqa: E731
        assert desc().startswith("Not captioning")
        x.screenshot(shots / "overlay-1-not-captioning.png")

        app.send("caption")
        assert "hello" in until(desc, lambda d: "hello" in d)
        x.screenshot(shots / "overlay-2-captioning.png")
        app.send("stop")
        assert until(desc, lambda d: d.startswith("Stopped")).startswith("Stopped")
        listener.wait_for(lambda ev: False, 3)  # every event so far read
        said = [ev["data"] for ev in listener.events if ev["type"] == "object:announcement"]
        lines = [s for s in said if s.startswith(("Them: ", "You: "))  # not "Them: capturing"
                 and set(s.split(": ", 1)[1].split()) <= set(SCRIPT)]
        assert {s.split(":")[0] for s in lines} == {"Them", "You"}, said
        assert len(lines) == len(set(lines)) and len(lines) <= 6, lines  # per line, once
        words = " ".join(s.split(": ", 1)[1] for s in lines if s.startswith("Them"))
        assert "hello there this is a scripted caption stream for tests." in words, lines
        inserts = [ev for ev in listener.events if ev["type"].startswith("object:text-changed")]
        assert len(inserts) > 2 * len(lines)  # the history's word-by-word changes, not these
        x.screenshot(shots / "overlay-3-stopped-dimmed.png")

        app.send("caption")
        until(desc, lambda d: "hello" in d and not d.startswith("Stopped"))
        app.send("pause")
        assert until(desc, lambda d: d.startswith("Paused")).startswith("Paused")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Paused"), 10)
        x.screenshot(shots / "overlay-4-paused.png")
        app.send("settings")
        time.sleep(2)
        x.screenshot(shots / "overlay-5-aside-of-settings.png")
        app.send("close-settings")
        app.send("resume")
        app.send("stop")

        app.send("overlay-geometry")
        before = [int(v) for v in app.wait_line("overlay ").split()[1:]]
        bus.do(app.pid, "menu item", "Move or resize overlay")
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Moving the overlay"), 10)
        for key in ("Right", "Up", "Right shift", "Down shift", "Return"):
            app.send(f"key {key}")
        x.screenshot(shots / "overlay-6-moved-by-keys.png")
        app.send("overlay-geometry")
        after = [int(v) for v in app.wait_line("overlay ", ).split()[1:]]
        assert after == [before[0] + KEY_STEP, before[1] - KEY_STEP,
                         before[2] + KEY_STEP, before[3] + KEY_STEP], (before, after)
