"""The overlay says what state captioning is in (a band in the user's colours), marks late
captions, dims rows that are not current, steps aside of the app's dialogs and is moved and
resized by keys (offscreen; the real windows under Xvfb and AT-SPI: test_gui_overlay_walk.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialog

from voxcap.events import EngineFailed
from voxcap.gui.overlay.window import KEY_STEP
from voxcap.setting_refs import ref

RED = "#ff2020"


def _caption(qtbot, app, fake_audio):
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: any("tests." in t for t in app.overlay.visible_text()), timeout=5000)


def _band_pixels(overlay) -> int:
    """Pixels of the text colour (red here) in the overlay's top row."""
    img = overlay.grab().toImage()
    top = overlay.line_height()
    return sum(1 for y in range(0, top, 2) for x in range(0, img.width(), 2)
               if QColor(img.pixel(x, y)).red() > 200 and QColor(img.pixel(x, y)).green() < 90)


def _row_brightness(overlay) -> int:
    """The brightest red in the caption row at the bottom (dimmed rows are darker)."""
    img = overlay.grab().toImage()
    lh = overlay.line_height()
    return max(QColor(img.pixel(x, y)).red() for y in range(img.height() - lh, img.height(), 2)
               for x in range(0, img.width(), 2))


def test_band_says_each_state_and_old_rows_are_dimmed(qtbot, make_app, fake_audio):
    app = make_app()
    ov = app.overlay
    app.settings.overlay.text_color = RED
    ov.apply_settings(app.settings.overlay)
    ov.setGeometry(50, 50, 900, ov.fitted_height(3))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    assert ov.status.text == "Not captioning" and _band_pixels(ov) > 20  # never an empty band
    assert ov.accessibleDescription().startswith("Not captioning")
    _caption(qtbot, app, fake_audio)
    assert ov.status.text == "" and _band_pixels(ov) == 0  # live: captions only
    live = _row_brightness(ov)

    app.controller.pause_captioning()
    qtbot.waitUntil(lambda: app.state == "paused", timeout=5000)
    assert ov.status.text.startswith("Paused") and _band_pixels(ov) > 20
    assert _row_brightness(ov) < live * 0.6  # the last rows still there, plainly not current
    assert ov.accessibleDescription().split("\n")[:2] == [ov.status.text, "Earlier:"]

    app.controller.resume_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert ov.status.text == "" and _row_brightness(ov) == live
    app.caption_lag.add(25.3)  # as the paint measures it after a restart
    app.overlay_state.tick()
    assert ov.status.text == "Catching up — 25 s behind" and ov.status.rows_current
    app.caption_lag.add(0.6)
    app.overlay_state.tick()
    assert ov.status.text == ""  # live again

    app.bridge.events.emit(EngineFailed("the GPU fell off the bus", "restart the computer"))
    assert ov.status.text == "Engine error: the GPU fell off the bus — restart the computer"
    app.bridge.events.emit(EngineFailed("the engine failed", ref("verbose")))  # a setting's marker
    assert ov.status.text == ("Engine error: the engine failed — use Help → Copy diagnostics for "
                              "the log's end and report it")
    assert _row_brightness(ov) < live * 0.6
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)


def test_overlay_steps_aside_of_a_dialog_and_comes_back_unsaved(qtbot, make_app):
    app = make_app()
    ov = app.overlay
    ov.show()
    ov.setGeometry(200, 400, 700, 120)
    qtbot.waitUntil(lambda: app.window_state.overlay.geometry == [200, 400, 700, 120], timeout=3000)
    dlg = QDialog(app.window)
    dlg.setGeometry(300, 350, 400, 250)
    dlg.show()
    qtbot.waitUntil(lambda: not ov.geometry().intersects(dlg.frameGeometry()), timeout=3000)
    assert ov.size().toTuple() == (700, 120)
    dlg.close()
    qtbot.waitUntil(lambda: ov.geometry() == QRect(200, 400, 700, 120), timeout=3000)
    qtbot.wait(600)  # the save timer's time
    assert app.window_state.overlay.geometry == [200, 400, 700, 120]  # the user's place kept


def test_menus_and_top_row_kept_clear_of_an_automatically_placed_overlay(qtbot, make_app):
    app = make_app()
    ov, w = app.overlay, app.window
    assert not app.window_state.overlay.geometry  # placed by the app
    ov.show()
    w.setGeometry(100, 100, 900, 600)
    ov.setGeometry(150, 110, 600, 100)  # over the menus and Start captioning
    qtbot.waitUntil(lambda: not ov.geometry().intersects(QRect(*app.overlay_state.aside
                                                                .controls_rect())), timeout=3000)


def test_move_and_resize_by_keys(qtbot, make_app):
    app = make_app()
    ov = app.overlay
    ov.show()
    ov.setGeometry(100, 300, 600, 120)
    act = app.overlay_state.act_move
    assert act in app.window.actions() and not act.shortcut().isEmpty()  # F1 lists it
    assert "Shift+arrows resize" in act.text()
    view = app.window.act_reset_overlay.associatedObjects()
    assert any(act in getattr(m, "actions", list)() for m in view)  # View menu
    act.trigger()
    assert ov.keyboard_mode
    qtbot.keyClick(ov, Qt.Key.Key_Right)
    qtbot.keyClick(ov, Qt.Key.Key_Up)
    assert ov.geometry().topLeft().toTuple() == (100 + KEY_STEP, 300 - KEY_STEP)
    qtbot.keyClick(ov, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(ov, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert ov.size().toTuple() == (600 + KEY_STEP, 120 + KEY_STEP)
    qtbot.keyClick(ov, Qt.Key.Key_Return)
    assert not ov.keyboard_mode
    qtbot.waitUntil(lambda: app.window_state.overlay.geometry ==
                    [100 + KEY_STEP, 300 - KEY_STEP, 600 + KEY_STEP, 120 + KEY_STEP], timeout=3000)


def _rows_with(img, pick) -> set[int]:
    """The pixel rows of ``img`` (inside the keyboard mode's frame) holding a pixel ``pick``s."""
    return {y for y in range(4, img.height() - 4) for x in range(14, img.width() - 14)
            if pick(QColor(img.pixel(x, y)))}


def test_move_mode_help_has_a_row_of_its_own(qtbot, make_app, fake_audio):
    """Ctrl+Shift+O's help (white) is written above the state band and the captions (red
    here), not over them; a narrow overlay wraps it rather than cutting it off."""
    app = make_app()
    ov = app.overlay
    app.settings.overlay.text_color = RED
    ov.apply_settings(app.settings.overlay)
    ov.show()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    _caption(qtbot, app, fake_audio)
    app.controller.pause_captioning()
    qtbot.waitUntil(lambda: ov.status.text.startswith("Paused"), timeout=5000)
    for width in (900, 420):
        ov.setGeometry(50, 50, width, ov.fitted_height(3))
        app.overlay_state.act_move.trigger()
        img = ov.grab().toImage()
        white = _rows_with(img, lambda c: min(c.red(), c.green(), c.blue()) > 200)
        red = _rows_with(img, lambda c: c.red() > 200 and c.green() < 90)
        assert white and red, (width, len(white), len(red))
        assert max(white) < min(red), (width, sorted(white & red))
        assert ov.visible_text(), width  # a caption row still shows under the band
        qtbot.keyClick(ov, Qt.Key.Key_Escape)
    assert not ov.keyboard_mode


def test_band_and_notice_say_speech_without_captions(qtbot, make_app, fake_audio, tmp_path):
    """The caption watchdog's alarm (app.session.caption_watchdog) in the overlay's band, in the
    window's notice and in what screen readers are given; gone once captions are back."""
    from voxcap.events import CaptionWatch

    app = make_app()
    ov = app.overlay
    app.settings.overlay.text_color = RED
    ov.apply_settings(app.settings.overlay)
    ov.setGeometry(50, 50, 900, ov.fitted_height(3))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    _caption(qtbot, app, fake_audio)
    sid = next(iter(app.labels))
    app.bridge.events.emit(CaptionWatch(sid, "Them", "missing", 8.0,
                                       "Them: speech, but no captions for 8 s"))
    assert ov.status.text == "Them: speech, but no captions for 8 s" and _band_pixels(ov) > 20
    assert ov.accessibleDescription().startswith("Them: speech, but no captions for 8 s")
    assert "no captions for 8 s" in app.window.notice.text()
    shots = Path(os.environ.get("VOXCAP_SHOTS") or tmp_path)  # VOXCAP_SHOTS: keep them
    assert ov.grab().save(str(shots / "overlay-no-captions.png"))
    if os.environ.get("QT_QPA_PLATFORM") == "xcb":  # under Xvfb: the screen as a person sees it
        ov.setGeometry(50, 520, 900, ov.fitted_height(3))  # below the main window's notice
        ov.show()
        ov.raise_()
        qtbot.waitExposed(ov)
        qtbot.wait(300)
        subprocess.run(["import", "-window", "root", str(shots / "screen-no-captions.png")],
                       check=True, timeout=60)
    app.caption_lag.add(25.3)
    app.overlay_state.tick()
    assert "no captions" in ov.status.text  # absence is said before lateness
    app.bridge.events.emit(CaptionWatch(sid, "Them", "fresh_session", 15.0,
                                       "Them: speech, but no captions for 15 s — starting a "
                                       "fresh caption session"))
    assert ov.status.topic == "no captions" and "fresh caption session" in ov.status.text
    app.bridge.events.emit(CaptionWatch(sid, "Them", "back", 0.0, "Them: captions are back"))
    assert "no captions" not in ov.status.text
    assert app.window.notice.text() == "Them: captions are back"
