"""The first-use offer of a translation model as a screen-reader and keyboard user meets it: the
real app under Xvfb, read over AT-SPI from another process. Choosing a target without its model
opens the offer, which is announced with what it needs and its size; Alt+T reaches the language
spoken, Alt+N ("Not now") closes it, and the main window's notice names the fix."""

from __future__ import annotations

import pytest
from support.atspi import pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready
from support.model_index import ModelIndexServer
from support.tiny_translation import copy_package, make_archive, make_package

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def node(tree: dict, role: str, name: str, state: str = "") -> dict | None:
    return next((n for n in walk(tree) if n.get("role") == role
                 and n.get("name", "").startswith(name)
                 and (not state or state in n.get("states", ()))), None)


def test_the_offer_is_announced_and_reached_by_keyboard(tmp_path, monkeypatch):
    package = make_package(tmp_path / "pk" / "en_de", "en", "de")
    server = ModelIndexServer()
    try:
        archive = make_archive(copy_package(package, tmp_path / "src" / "en_de", "en", "de"),
                               tmp_path / "translate-en_de-1_0.argosmodel")
        server.add(archive, "en", "de")
        size = f"{archive.stat().st_size / 1e6:.1f} MB"
        monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", server.index_url)
        with atspi_app_ready(tmp_path) as (x, bus, listener, app):
            tree = lambda: bus.dump(app.pid)  # noqa: E731
            app.send("settings")  # where a target is chosen: voxcap has the keyboard
            until(tree, lambda t: node(t, "page tab", "Translation") is not None)
            app.send("translate-to de")  # as Apply does
            said = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and "needs en-de" in ev["data"], 30)
            assert said and f"en-de ({size})" in said["data"], listener.events
            got = until(tree, lambda t: node(t, "dialog", "Translation model") is not None)
            dialog = node(got, "dialog", "Translation model")
            assert dialog is not None, "the offer is not in the accessibility tree"
            for name in ("Download", "Cancel download", "Install from a file…", "Not now"):
                assert node(dialog, "push button", name), name
            assert node(dialog, "progress bar", "Download progress")
            x.screenshot(tmp_path / "offer.png")
            bus.keys("alt+t")
            got = until(tree, lambda t: node(t, "combo box", "English", "focused") is not None)
            assert node(got, "combo box", "English", "focused"), "Alt+T: the language spoken"
            bus.keys("alt+n")
            gone = until(tree, lambda t: node(t, "dialog", "Translation model") is None)
            assert node(gone, "dialog", "Translation model") is None, "Alt+N did not close it"
            notice = "Captions are not translated from English into German"
            assert node(gone, "label", notice), "no notice names the fix"
    finally:
        server.close()
