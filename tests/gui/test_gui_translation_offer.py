"""The first-use offer of a translation model, in the app: choosing a target whose pair is not
installed (or hearing a line in a language with no route to it) offers the download once, with
its size, and the captions go on untranslated meanwhile with a notice naming the fix; an installed
pair offers nothing; "Not now" is not asked again for that target in this run. The index is the
loopback one, the download real."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtWidgets import QMessageBox
from support import gui_fakes
from support.model_index import ModelIndexServer
from support.tiny_translation import copy_package, make_archive, make_package

from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.translate.package import installed_pairs

FRENCH = tuple("Je pense que nous devrions déplacer la réunion à jeudi après-midi.".split())


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return make_package(tmp_path_factory.mktemp("tiny-mt") / "fr_en", "fr", "en")


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data" / "translation-models"


@pytest.fixture
def server(monkeypatch, package, tmp_path):
    s = ModelIndexServer()
    monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", s.index_url)
    for source, target in (("en", "de"), ("fr", "en")):
        folder = copy_package(package, tmp_path / "src" / f"{source}_{target}", source, target)
        s.add(make_archive(folder, tmp_path / f"translate-{source}_{target}-1_0.argosmodel"),
              source, target)
    yield s
    s.close()


def choose_target(app, target: str) -> None:
    new = app.settings.copy()
    new.translation.translate_to = target
    app.settings_control.apply(new)


def test_choosing_a_target_without_its_model_offers_it_once_with_its_size(qtbot, make_app, models,
                                                                           server, tmp_path):
    app = make_app()
    offer = app.translation_offer
    choose_target(app, "de")
    assert "Settings → Translation → Download" in app.window.notice.text()
    qtbot.waitUntil(lambda: offer.dialog is not None and offer.dialog.isVisible(), timeout=10000)
    dlg = offer.dialog
    size = len(server.files["translate-en_de-1_0.argosmodel"]) / 1e6
    assert dlg.source.currentText() == "English"  # nothing heard yet: the half all routes need
    assert f"needs en-de ({size:.1f} MB)" in dlg.need.text()
    dlg.grab().save(str(tmp_path / "offer.png"))
    dlg.download_button.click()
    qtbot.waitUntil(lambda: dlg.installed, timeout=20000)
    assert ("en", "de") in installed_pairs(models)
    assert dlg.not_now.text() == "&Close" and dlg.progress.bar.value() == 1000
    # the cause is gone: the window stops saying "not installed" while the offer says installed
    assert "Settings → Translation" not in app.window.notice.text()
    dlg.not_now.click()
    qtbot.waitUntil(lambda: offer.dialog is None)
    assert "Settings → Translation" not in app.window.notice.text()
    assert offer.declined == set()


def _logged(caplog, word: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if f": {word} " in r.getMessage()]


def test_a_model_installed_by_the_offer_is_loaded_at_once_and_one_removed_is_not_offered_again(
        qtbot, make_app, models, server, caplog):
    """The offer's install: the app's translation loads the model before the next line needs it
    (~1 s for OPUS-MT's size, not on the first line). Removed in Settings: dropped from memory,
    and not offered again this run (the user chose it; the notice names the fix)."""
    caplog.set_level(logging.INFO, "voxcap.translate")
    app = make_app()
    offer = app.translation_offer
    choose_target(app, "de")
    qtbot.waitUntil(lambda: offer.dialog is not None and offer.dialog.isVisible(), timeout=10000)
    offer.dialog.download_button.click()
    qtbot.waitUntil(lambda: bool(_logged(caplog, "loaded")), timeout=30000)
    assert "en_de" in _logged(caplog, "loaded")[0]
    offer.dialog.not_now.click()
    qtbot.waitUntil(lambda: offer.dialog is None)
    app.settings_control.open()
    section = app.settings_control.dialog.translation.models
    section.remove_buttons["en-de"].click()
    section.confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: bool(_logged(caplog, "dropped")), timeout=30000)
    assert "en_de" in _logged(caplog, "dropped")[0] and offer.declined == {"de"}
    offer.check("de")
    qtbot.wait(300)
    assert offer.dialog is None and "Settings → Translation → Download" in app.window.notice.text()


def test_an_installed_pair_offers_nothing(qtbot, make_app, models, package, server):
    copy_package(package, models / "en_de", "en", "de")
    app = make_app()
    choose_target(app, "de")
    qtbot.wait(300)
    assert app.translation_offer.dialog is None and app.translation_offer._pending is None


def test_not_now_is_not_asked_again_for_that_target(qtbot, make_app, models, server):
    app = make_app()
    offer = app.translation_offer
    choose_target(app, "de")
    qtbot.waitUntil(lambda: offer.dialog is not None, timeout=10000)
    offer.dialog.not_now.click()
    qtbot.waitUntil(lambda: offer.dialog is None)
    assert offer.declined == {"de"}
    choose_target(app, "")
    choose_target(app, "de")  # again: the notice only
    qtbot.wait(300)
    assert offer.dialog is None and offer._pending is None
    assert "Settings → Translation → Download" in app.window.notice.text()
    assert installed_pairs(models) == {}


def test_a_line_in_a_language_without_a_route_offers_its_pair(qtbot, make_app, fake_audio, models,
                                                               package, server, monkeypatch):
    copy_package(package, models / "en_de", "en", "de")  # English -> German is here: fr-en is not
    monkeypatch.setattr(gui_fakes, "SCRIPT", FRENCH)
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    settings.translation.translate_to = "de"
    app = make_app(settings)
    offer = app.translation_offer
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: "réunion" in app.window.history.toPlainText(), timeout=10000)
    app.toggle_captioning()  # the line ends: its language is told, and there is no route
    qtbot.waitUntil(lambda: offer.dialog is not None, timeout=30000)
    assert offer.dialog.source.currentText() == "French"
    assert "through English, this needs fr-en (" in offer.dialog.need.text()
    assert "from French into German" in app.window.notice.text()
    assert set(installed_pairs(models)) == {("en", "de")}  # nothing fetched unasked


def test_an_unreachable_index_is_one_line_and_a_file_still_installs(qtbot, make_app, models,
                                                                     package, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", "http://127.0.0.1:9/index.json")
    archive = make_archive(copy_package(package, tmp_path / "src" / "en_de", "en", "de"),
                           tmp_path / "translate-en_de-1_0.argosmodel")
    app = make_app()
    offer = app.translation_offer
    choose_target(app, "de")
    qtbot.waitUntil(lambda: offer.dialog is not None, timeout=10000)
    dlg = offer.dialog
    line = dlg.need.text()
    assert line.startswith("✗ Cannot reach http://127.0.0.1:9/index.json") and "\n" not in line
    assert "from a model file" in line and not dlg.download_button.isEnabled()
    dlg.install_from(archive)  # what "Install from a file…" does once a file is picked
    qtbot.waitUntil(lambda: dlg.installed, timeout=20000)
    assert set(installed_pairs(models)) == {("en", "de")}
    dlg.not_now.click()
    qtbot.waitUntil(lambda: offer.dialog is None)
    assert offer.declined == set()
