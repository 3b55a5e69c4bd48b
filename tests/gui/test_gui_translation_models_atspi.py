"""Settings → Translation → Translation models as a keyboard and screen-reader user meets them:
the real app under Xvfb, keys typed through XTest, the controls read over AT-SPI from another
process. Alt+M reaches the list of models on offer (the loopback index), Shift+Tab the installed
pair's Remove button (named by its pair, asking first), Tab the Download button; the download's
progress and its end are read as the status line; the offline install buttons are named."""

from __future__ import annotations

import os

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


def focused(tree: dict, role: str, name: str) -> bool:
    return any(n.get("role") == role and n.get("name", "").startswith(name)
               and "focused" in n.get("states", ()) for n in walk(tree))


def named(tree: dict, role: str, name: str) -> bool:
    return any(n.get("role") == role and n.get("name", "").startswith(name) for n in walk(tree))


def test_the_models_section_by_keyboard_and_named(tmp_path, monkeypatch):
    package = make_package(tmp_path / "pk" / "fr_en", "fr", "en")
    copy_package(package, tmp_path / "data" / "translation-models" / "fr_en", "fr", "en")
    server = ModelIndexServer()
    try:
        de_en = copy_package(package, tmp_path / "src" / "de_en", "de", "en")
        (de_en / "README").write_bytes(os.urandom(1 << 20))  # a download that takes a moment
        server.add(make_archive(de_en, tmp_path / "translate-de_en-1_0.argosmodel"), "de", "en")
        server.delay_s = 0.4  # ~7 s: time to read it part-way
        monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", server.index_url)  # the app's environment
        with atspi_app_ready(tmp_path) as (x, bus, _listener, app):
            tree = lambda: bus.dump(app.pid)  # noqa: E731
            app.send("settings")
            until(tree, lambda t: named(t, "page tab", "Translation"))
            bus.keys("ctrl+Tab", "ctrl+Tab", "ctrl+Tab")  # the fourth tab
            offer = "German → English (de-en), "
            got = until(tree, lambda t: named(t, "combo box", offer))
            assert named(got, "combo box", offer), "the index's pair is not offered"
            assert named(got, "label", "French → English (fr-en)")
            assert named(got, "label", "Installed in ")
            for button in ("Install from a file…", "Install from a folder…"):
                assert named(got, "push button", button), button
            bus.keys("alt+m")
            assert focused(until(tree, lambda t: focused(t, "combo box", offer)), "combo box",
                           offer), "Alt+M did not reach the models on offer"
            bus.keys("shift+Tab")
            remove = "Remove French → English (fr-en)"
            assert focused(until(tree, lambda t: focused(t, "push button", remove)),
                           "push button", remove), "Shift+Tab did not reach the pair's Remove"
            bus.keys("space")  # asks first; Keep it is the default
            asked = until(tree, lambda t: named(t, "push button", "Keep it"))
            assert named(asked, "label", "Remove the French → English (fr-en) translation model")
            bus.keys("Return")
            until(tree, lambda t: not named(t, "push button", "Keep it"))
            bus.keys("alt+m", "Tab")
            assert focused(until(tree, lambda t: focused(t, "push button", "Download")),
                           "push button", "Download"), "Tab did not reach Download"
            bus.keys("space")
            going = until(tree, lambda t: named(t, "label", "Downloading de-en: "))
            assert named(going, "label", "Downloading de-en: "), "no progress is read"
            assert named(going, "progress bar", "Download progress")
            x.screenshot(tmp_path / "models-downloading.png")
            done = until(tree, lambda t: named(t, "label", "✓ Installed de-en."), timeout=60)
            assert named(done, "push button", "Remove German → English (de-en)")
            assert named(done, "push button", remove), "Keep it removed the model"
            x.screenshot(tmp_path / "models-installed.png")
            assert focused(done, "push button", "Install from a file…"), \
                "the keyboard's place was lost with the Cancel button"
    finally:
        server.close()
