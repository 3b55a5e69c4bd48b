"""Translations in the overlay and Settings → Translation: each finished line's translation under
it (italic, the user's size) or instead of it, matched by stream and start time, never by line
number; the original shown exactly as fast as without; screen readers told as shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from voxcap.app.settings import AppSettings, OverlaySettings
from voxcap.app.translation_settings import BOTH, ORIGINAL, TRANSLATION
from voxcap.captions.assembly import CaptionAssembler
from voxcap.engine.choice import EngineChoice
from voxcap.events import LineTranslated, TextDelta
from voxcap.gui.overlay.window import CaptionOverlay

ALT = Qt.KeyboardModifier.AltModifier


def _deltas(sid, words, start=0.0):
    return [TextDelta(sid, " " + w, (i,), i, start + i * 0.3, start + i * 0.3 + 0.08, 0.0)
            for i, w in enumerate(words)]


def _overlay(qtbot, shown, lines=2):
    ov = CaptionOverlay(OverlaySettings(lines=lines, font_size=20))
    qtbot.addWidget(ov)
    ov.set_translation_shown(shown)
    ov.resize(1200, ov.fitted_height())
    return ov


def _speak(ov, asm, sid, words, start):
    """``words`` said on stream ``sid``, then its end (the last word placed, the line final)."""
    for d in _deltas(sid, words, start):
        ov.add_updates(asm.feed(d))
    ov.add_updates(asm.finish(sid))


def _translated(line, text, line_id=1000):
    """The translator's event: its own line number (not the overlay's), the line's stream and
    times."""
    return LineTranslated(line.stream_id, line_id, line.text, line.start_s, line.end_s, "fr", "en",
                          text)


def test_both_shows_the_translation_under_its_line_in_italics(qtbot):
    ov = _overlay(qtbot, BOTH, lines=2)
    assert ov.fitted_height() == 4 * ov.line_height() + 16  # two rows a caption line
    asm = CaptionAssembler(width=160)
    _speak(ov, asm, "a", ["bonjour", "à", "tous"], 0.0)
    assert ov.visible_text() == ["bonjour à tous"]  # at once: nothing waits for a translation
    _speak(ov, asm, "a", ["merci", "beaucoup"], 5.0)  # after a pause: a new line
    first = asm.history[0]
    ov.add_translation(_translated(first, "hello everyone"))
    assert ov.visible_text() == ["bonjour à tous", "hello everyone", "merci beaucoup"]
    rows = ov._visible_rows(4)
    assert [r[3] for r in rows] == [False, True, False]  # the translation's row: italic
    assert ov._translation_font.italic() and not ov._font.italic()
    assert ov._translation_font.pointSize() == ov._font.pointSize()


def test_a_translation_goes_to_the_line_of_its_stream_and_start_not_its_number(qtbot):
    ov = _overlay(qtbot, BOTH, lines=4)
    asm = CaptionAssembler(width=160, labels={"a": "Them", "b": "You"})
    ov.show_labels = True
    _speak(ov, asm, "a", ["bonjour", "à", "tous"], 0.0)
    _speak(ov, asm, "b", ["salut", "toi"], 0.1)
    them, you = asm.history
    # numbered as the translator numbers its lines: the other stream's line's number
    ov.add_translation(_translated(you, "hi you", line_id=them.line_id))
    ov.add_translation(LineTranslated("a", you.line_id, "?", 7.0, 8.0, "fr", "en", "never shown"))
    assert ov.visible_text() == ["Them: bonjour à tous", "You: salut toi", "hi you"]


def test_translation_only_shows_the_original_until_its_translation_comes(qtbot):
    ov = _overlay(qtbot, TRANSLATION)
    assert ov.fitted_height() == 2 * ov.line_height() + 16
    asm = CaptionAssembler(width=160)
    _speak(ov, asm, "a", ["bonjour", "à", "tous"], 0.0)
    assert ov.visible_text() == ["bonjour à tous"]
    ov.add_translation(_translated(asm.history[0], "hello everyone"))
    assert ov.visible_text() == ["hello everyone"]
    assert ov._visible_rows(2)[0][3] is False  # alone, it is the caption: upright
    ov.set_translation_shown(ORIGINAL)  # translation off, or "Original only"
    assert ov.visible_text() == ["bonjour à tous"]


def test_the_app_shows_a_translation_event_under_its_caption_and_follows_settings(
        qtbot, make_app, fake_audio, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))  # no model: none of the user's
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    settings.translation.translate_to = "en"
    app = make_app(settings)
    ov = app.overlay
    assert ov.translation_shown == BOTH and ov.height() == ov.fitted_height()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: any("hello there" in r for r in ov.visible_text()), timeout=10000)
    line = next(iter(ov._lines.values()))
    app.hub.publish(_translated(line, "bonjour là", line_id=line.line_id + 7))
    qtbot.waitUntil(lambda: "bonjour là" in ov.visible_text(), timeout=5000)
    rows = ov.visible_text()
    assert rows.index("bonjour là") == len(rows) - 1 and rows[0].startswith("hello there")
    new = app.settings.copy()
    new.translation.show = TRANSLATION
    app.settings_control.apply(new)
    qtbot.waitUntil(lambda: ov.visible_text()[0] == "bonjour là", timeout=5000)
    assert ov.height() == ov.fitted_height() == ov.line_height() * 2 + 16
    new = app.settings.copy()
    new.translation.translate_to = ""
    app.settings_control.apply(new)
    qtbot.waitUntil(lambda: ov.translation_shown == ORIGINAL, timeout=5000)
    assert "bonjour là" not in ov.visible_text()


def test_settings_translation_tab_named_and_reached_by_its_mnemonics(qtbot):
    from voxcap.gui.settings.dialog import SettingsDialog

    s = AppSettings()
    dlg = SettingsDialog(s)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg)
    page = dlg.translation
    dlg.show_tab(page)
    assert dlg.tabs.tabText(dlg.tabs.currentIndex()) == "Translation"
    assert page.target.accessibleName() == "Translate captions into"
    assert page.show_choice.accessibleName() == "Translation shown"
    assert [page.target.itemText(i) for i in range(page.target.count())][:3] == \
        ["Off", "English", "French"] and page.target.count() == 14
    assert not page.show_choice.isEnabled()  # nothing to show while off
    QTest.keyClick(dlg, Qt.Key.Key_T, ALT)
    assert QApplication.focusWidget() is page.target
    page.target.setCurrentIndex(page.target.findData("en"))
    assert page.show_choice.isEnabled()
    QTest.keyClick(dlg, Qt.Key.Key_H, ALT)
    assert QApplication.focusWidget() is page.show_choice
    page.show_choice.setCurrentIndex(page.show_choice.findData(TRANSLATION))
    out = dlg.result_settings().translation
    assert (out.translate_to, out.show, out.shown()) == ("en", TRANSLATION, TRANSLATION)


def test_screen_readers_hear_the_translation_as_the_overlay_shows_it(qtbot, monkeypatch):
    """What the overlay hands to screen readers (``a11y.announce``, recorded here: the AT-SPI
    delivery itself is tested in test_gui_atspi)."""
    import voxcap.gui.overlay.window as window

    told: list[str] = []
    monkeypatch.setattr(window, "announce", lambda _w, text, assertive=False: told.append(text))
    ov = _overlay(qtbot, BOTH)
    asm = CaptionAssembler(width=160, labels={"a": "Them"})
    _speak(ov, asm, "a", ["bonjour", "à", "tous"], 0.0)
    assert told == ["Them: bonjour à tous"]  # at once, as without translation
    ov.add_translation(_translated(asm.history[0], "hello everyone"))
    assert told[1:] == ["Them, in English: hello everyone"]
    told.clear()
    ov.set_translation_shown(TRANSLATION)
    _speak(ov, asm, "a", ["merci", "beaucoup"], 5.0)
    assert told == []  # held for its translation
    ov.add_translation(_translated(asm.history[1], "thank you very much"))
    assert told == ["Them: thank you very much"]


def test_a_taller_overlay_grows_up_from_the_screens_bottom_not_off_it(
        qtbot, make_app, monkeypatch, tmp_path):
    """"Both" doubles the overlay's rows. Where it starts, at the bottom of the screen, it must
    grow upwards: grown downwards its last rows, the newest line and its translation, were off
    the screen (a 1400x900 screen, the overlay where it starts: 2 rows became 4)."""
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    settings.translation.translate_to = "en"
    settings.translation.show = ORIGINAL
    app = make_app(settings)
    ov = app.overlay
    area = ov.screen().availableGeometry()
    before = ov.geometry()
    assert area.contains(before), (before, area)
    new = app.settings.copy()
    new.translation.show = BOTH
    app.settings_control.apply(new)
    assert ov.height() == ov.fitted_height() > before.height()
    assert area.contains(ov.geometry()), (ov.geometry(), area)
    assert ov.geometry().bottom() == before.bottom() and ov.x() == before.x()
