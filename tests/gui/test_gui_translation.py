"""Translated captions in the app: the scripted engine speaks French, the tiny CTranslate2 model is
installed where the app looks, Settings' target is English: each finished line's translation
follows it in the history (searchable like the captions), and the session's journal has it for
the exports."""

from __future__ import annotations

import pytest
from support import gui_fakes
from support.tiny_translation import make_package

from voxcap.app.settings import AppSettings
from voxcap.captions.export import render
from voxcap.engine.choice import EngineChoice

FRENCH = tuple("Je pense que nous devrions déplacer la réunion à jeudi après-midi.".split())


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return make_package(tmp_path_factory.mktemp("tiny-mt") / "fr_en", "fr", "en")


def test_the_history_shows_each_finished_line_and_its_translation(qtbot, make_app, fake_audio,
                                                                   package, tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    shutil.copytree(package, tmp_path / "data" / "translation-models" / "fr_en")
    monkeypatch.setattr(gui_fakes, "SCRIPT", FRENCH)
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    settings.translation.translate_to = "en"
    app = make_app(settings)
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: "réunion" in app.window.history.toPlainText(), timeout=10000)
    app.toggle_captioning()  # the line ends: translated before the journal closes
    qtbot.waitUntil(lambda: "[fr→en]" in app.window.history.toPlainText(), timeout=30000)
    blocks = app.window.history.toPlainText().splitlines()
    at = next(i for i, b in enumerate(blocks) if "[fr→en]" in b)
    assert "[fr] Je pense" in blocks[at - 1]  # under the line it translates, tagged
    app.window.grab().save(str(tmp_path / "history-translated.png"))
    qtbot.waitUntil(lambda: app.state == "off", timeout=10000)
    session = app.exports.current_session()
    translated = [ln for ln in session.lines if ln.translation]
    assert translated and blocks[at].endswith(translated[0].translation)
    assert "<lang en>" in render(session, ".vtt", translation="both")[0]
