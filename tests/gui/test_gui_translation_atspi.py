"""Settings → Translation as a keyboard and screen-reader user meets it: the real app under Xvfb,
keys typed through XTest, the controls read over AT-SPI from another process: Ctrl+Tab reaches
the tab, Alt+T the target language, Alt+H what is shown (enabled once a target is chosen),
each beside its label."""

from __future__ import annotations

import pytest
from support.atspi import pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def _focused(tree: dict, value: str) -> bool:
    """Whether a combo box showing ``value`` has the keyboard focus (Qt's AT-SPI bridge names a
    list by its current choice, like the app's other lists; its label is read beside it)."""
    return any(n.get("role") == "combo box" and n.get("name") == value
               and "focused" in n.get("states", ()) for n in walk(tree))


def test_the_translation_tab_and_its_two_lists_by_keyboard_and_named(tmp_path):
    with atspi_app_ready(tmp_path) as (x, bus, _listener, app):
        tree = lambda: bus.dump(app.pid)  # noqa: E731
        app.send("settings")
        until(tree, lambda t: any(n.get("role") == "page tab" and n.get("name") == "Translation"
                                  for n in walk(t)))
        bus.keys("ctrl+Tab", "ctrl+Tab", "ctrl+Tab")  # the fourth tab
        tab = until(tree, lambda t: any(n.get("role") == "page tab" and n.get("name") ==
                                        "Translation" and "selected" in n.get("states", ())
                                        for n in walk(t)))
        assert tab, "Ctrl+Tab did not reach the Translation tab"
        bus.keys("alt+t")
        got = until(tree, lambda t: _focused(t, "Off"))
        assert _focused(got, "Off"), "Alt+T did not reach the target language's list"
        labels = {n.get("name") for n in walk(got) if n.get("role") == "label"}
        assert {"Translate captions into:", "Show in the overlay and to screen readers:"} <= labels
        bus.keys("Down")  # Off -> English: what is shown can be chosen now
        assert _focused(until(tree, lambda t: _focused(t, "English")), "English")
        bus.keys("alt+h")
        both = "Original, its translation under it"
        assert _focused(until(tree, lambda t: _focused(t, both)), both), \
            "Alt+H did not reach the list of what is shown"
        x.screenshot(tmp_path / "settings-translation-keys.png")
