"""A keyboard-only run: first run, settings, tabs, start/stop, export and quit, with nothing but
key presses sent to whatever has the keyboard focus (as a person without a mouse works)."""

from __future__ import annotations

import re
import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QLabel, QWidget

from voxcap.app.settings import AppSettings

ALT = Qt.KeyboardModifier.AltModifier
CTRL = Qt.KeyboardModifier.ControlModifier


def focus() -> QWidget:
    return (QApplication.focusWidget() or QApplication.activeModalWidget()
            or QApplication.activeWindow())


def key(k, mod=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(focus(), k, mod)


def type_text(text: str) -> None:
    QTest.keyClicks(focus(), text)


def mnemonics(root: QWidget) -> dict[str, list[str]]:
    """Letter -> the visible texts that use it as their Alt mnemonic."""
    out: dict[str, list[str]] = {}
    for w in root.findChildren(QWidget):
        text = w.text() if hasattr(w, "text") and callable(w.text) else ""
        if not isinstance(text, str) or not w.isVisibleTo(root):
            continue
        m = re.search(r"&([^&\s])", text.replace("&&", ""))
        if m:
            out.setdefault(m.group(1).lower(), []).append(text)
    return out


def test_keyboard_only_first_run_settings_captioning_export_quit(qtbot, make_app, fake_audio,
                                                                tiny_model_dir, tmp_path):
    app = make_app(AppSettings(), first_run=True)
    w = app.window
    dlg = app.settings_control.first_run_dialog
    qtbot.waitUntil(lambda: dlg.isVisible())
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg)
    assert not {k: v for k, v in mnemonics(dlg).items() if len(v) > 1}

    # first run: a model folder without weights -> the self-check mode is offered and taken
    key(Qt.Key.Key_F, ALT)  # "Use a model &folder I already have"
    qtbot.waitUntil(dlg.opt_folder.isChecked)  # a mnemonic "clicks" with a short animation
    assert focus() is dlg.opt_folder
    key(Qt.Key.Key_Tab)
    assert focus() is dlg.folder
    type_text(str(tiny_model_dir))
    qtbot.waitUntil(lambda: dlg.self_check.isVisible(), timeout=5000)
    assert "Self-check only" in dlg.folder_check.text()
    key(Qt.Key.Key_Y, ALT)
    qtbot.waitUntil(dlg.self_check.isChecked)
    key(Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: app.settings_control.first_run_dialog is None, timeout=5000)
    assert app.settings.model_dir == str(tiny_model_dir) and app.settings.dummy_weights
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)

    # right after launch: tab shortcuts work
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    key(Qt.Key.Key_2, CTRL)
    assert w.tabs.currentIndex() == 1
    key(Qt.Key.Key_1, CTRL)
    assert w.tabs.currentIndex() == 0

    # settings: every mnemonic reaches its field; Apply has one
    key(Qt.Key.Key_Comma, CTRL)
    sd = app.settings_control.dialog
    qtbot.waitUntil(lambda: sd is not None and sd.isVisible())
    sd.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is sd)
    assert not {k: v for k, v in mnemonics(sd).items() if len(v) > 1}
    for label in sd.findChildren(QLabel):
        if "&" in label.text() and label.buddy() is not None:
            buddy = label.buddy()
            assert buddy.focusPolicy() & Qt.FocusPolicy.TabFocus, (label.text(), buddy)
    key(Qt.Key.Key_M, ALT)
    assert focus() is sd.engine_panel.model_dir
    key(Qt.Key.Key_D, ALT)
    assert sd.engine_panel.delay.isAncestorOf(focus()) or focus() is sd.engine_panel.delay
    key(Qt.Key.Key_A, CTRL)  # select the delay, type a new one
    type_text("960")
    key(Qt.Key.Key_A, ALT)  # &Apply
    qtbot.waitUntil(lambda: app.settings.delay_ms == 960, timeout=5000)
    key(Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: app.settings_control.dialog is None, timeout=5000)
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)

    # start, caption, stop with F5
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    key(Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    for label in list(fake_audio.captures):
        fake_audio.feed(label, 2.0)
    qtbot.waitUntil(lambda: "hello" in w.history.toPlainText(), timeout=5000)
    key(Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: app.state == "off", timeout=10000)

    # export with Ctrl+E: the file dialog, typed into and confirmed with Enter
    out = tmp_path / "keyboard.srt"

    def fill_dialog() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QFileDialog):
            QTimer.singleShot(100, fill_dialog)
            return
        QTest.keyClick(focus(), Qt.Key.Key_A, CTRL)
        QTest.keyClicks(focus(), str(out))
        QTest.keyClick(focus(), Qt.Key.Key_Return)
    QTimer.singleShot(100, fill_dialog)
    key(Qt.Key.Key_E, CTRL)
    qtbot.waitUntil(out.exists, timeout=10000)
    assert "hello" in out.read_text()
    assert w.notice.text() == f"Exported to {out}"

    # quit with Ctrl+Q: the app is down within 5 s
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    t0 = time.monotonic()
    key(Qt.Key.Key_Q, CTRL)
    assert app.controller.closed.wait(5.0)
    assert time.monotonic() - t0 < 5.0
    assert not w.isVisible()


def test_cancelled_first_run_leaves_no_dialog(qtbot, make_app):
    app = make_app(AppSettings(), first_run=True)
    dlg = app.settings_control.first_run_dialog
    qtbot.waitUntil(lambda: dlg.isVisible())
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg)
    key(Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: app.settings_control.first_run_dialog is None, timeout=5000)
    QApplication.processEvents()
    QTest.qWait(50)
    assert not [d for d in app.window.findChildren(QDialog) if d.isVisible()]
    assert "No model configured" in app.window.engine_status.label.text()
    assert "press Start captioning (F5) to choose again" in app.window.engine_status.fix.text()
    # ...and Start leads there: the choice opens again (not "fix the engine's problem")
    app.window.act_start.trigger()  # F5's action
    qtbot.waitUntil(lambda: app.settings_control.first_run_dialog is not None, timeout=5000)
    assert app.state == "off"
    app.settings_control.first_run_dialog.reject()
