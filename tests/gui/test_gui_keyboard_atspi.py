"""The keyboard as a keyboard-only user meets it: the real app (scripted engine, fake audio)
under Xvfb, keys typed through XTest as a keyboard types them (not a control's AT-SPI action),
what they reached read over AT-SPI from another process. Alt+P is the Previous sessions tab,
Alt+H the Help menu, F1 lists the overlay's and pause's keys, and Ctrl+Shift+O then arrows move
the overlay with no mouse."""

from __future__ import annotations

import pytest
from support.atspi import pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready

from voxcap.gui.overlay.window import KEY_STEP

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def _showing(tree: dict, role: str, name: str) -> list[dict]:
    return [n for n in walk(tree) if n.get("role") == role and n.get("name", "").startswith(name)
            and "showing" in n.get("states", ())]


def test_alt_letters_f1_and_overlay_keys_typed_on_the_keyboard(tmp_path):
    with atspi_app_ready(tmp_path) as (x, bus, listener, app):
        tree = lambda: bus.dump(app.pid)  # noqa: E731

        # no window manager: the pointer gives the window the keyboard. Alt+P: the Previous
        # sessions tab, not a button beginning with P
        bus.keys("at:300,300", "alt+p")
        tab = lambda t: [n for n in _showing(t, "page tab", "Previous sessions")  # noqa: E731
                         if "selected" in n.get("states", ())]
        assert tab(until(tree, tab)), "Alt+P did not select the Previous sessions tab"
        x.screenshot(tmp_path / "keys-1-alt-p.png")

        bus.keys("alt+h")  # the Help menu opens (not the Caption history tab)
        opened = until(tree, lambda t: _showing(t, "menu item", "Keyboard shortcuts"))
        assert _showing(opened, "menu item", "Keyboard shortcuts"), "Alt+H: no Help menu"
        assert not any("selected" in n.get("states", ()) for n in
                       _showing(opened, "page tab", "Caption history"))
        x.screenshot(tmp_path / "keys-2-alt-h.png")
        bus.keys("Escape")
        bus.keys("ctrl+Page_Down")  # the next tab, round from the last to the first
        first = lambda t: [n for n in _showing(t, "page tab", "Caption history")  # noqa: E731
                           if "selected" in n.get("states", ())]
        assert first(until(tree, first)), "Ctrl+PageDown did not go round to Caption history"

        bus.keys("F1")  # the list of keys: generated, so it holds the newest ones too
        listed = until(tree, lambda t: any("F6" in n.get("text", "") + n.get("name", "")
                                           for n in walk(t) if n.get("role") != "menu item"))
        assert "F6" in str(listed), "F1 listed no keys"
        text = " ".join(n.get("text", "") + " " + n.get("name", "") for n in walk(listed))
        for needed in ("Ctrl+Shift+O", "Ctrl+Alt+O", "Ctrl+Alt+C", "Ctrl+Q", "Ctrl+PgDown"):
            assert needed in text, needed
        x.screenshot(tmp_path / "keys-3-f1.png")
        bus.keys("Escape")

        app.send("overlay-geometry")
        before = [int(v) for v in app.wait_line("overlay ").split()[1:]]
        bus.keys("at:300,300", "ctrl+shift+o")  # the closed box left no X focus (no WM)
        assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                 and ev["data"].startswith("Moving the overlay"), 10)
        bus.keys("Right", "Down", "shift+Right", "Return")
        app.send("overlay-geometry")
        after = [int(v) for v in app.wait_line("overlay ").split()[1:]]
        assert after == [before[0] + KEY_STEP, before[1] + KEY_STEP,
                         before[2] + KEY_STEP, before[3]], (before, after)
