"""Pause keeps the session and its history (F6, the button and the menu entry); Stop ends it.
Closing the window while captioning asks first (no tray here); Ctrl+Q quits without asking."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from support.caption_helpers import without_language_tags
from support.gui_fakes import scripted_factory

from voxcap.events import Captioning, CaptioningAsked
from voxcap.gui.main.shortcut_list import shortcut_rows


def _captioning_with_text(qtbot, app, fake_audio):
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == Captioning.ON, timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: "hello" in app.window.history.toPlainText(), timeout=5000)


def _key(widget, key, mod=Qt.KeyboardModifier.NoModifier) -> None:
    widget.activateWindow()
    QTest.keyClick(QApplication.focusWidget() or widget, key, mod)


def test_f6_pauses_and_resumes_the_same_session_with_its_history(qtbot, make_app, fake_audio):
    app = make_app()
    w = app.window
    assert not w.act_pause.isEnabled()  # nothing to pause before Start
    _captioning_with_text(qtbot, app, fake_audio)
    session, before = app.controller.session_id, w.history.toPlainText()
    assert w.act_pause.isEnabled() and w.pause_button.text() == "Pause (F6)"

    _key(w, Qt.Key.Key_F6)
    qtbot.waitUntil(lambda: app.state == Captioning.PAUSED, timeout=5000)
    assert w.state_label.text() == "Paused"
    assert w.pause_button.text() == "Resume (F6)" and w.act_pause.text() == "&Resume captioning"
    assert w.start_button.text() == "Stop captioning (F5)"  # the session is still open
    # a screen reader hears what pressing each button does now
    assert w.start_button.accessibleName() == "Stop captioning"
    assert w.pause_button.accessibleName() == "Resume captioning"
    status = w.engine_status.label.text()  # its next step is Resume, not "Captioning."
    assert "Paused: press Resume (F6)." in status and "Captioning." not in status, status
    assert not fake_audio.captures or all(c.stopped for c in fake_audio.captures.values())

    w.pause_button.click()  # resume: same session, the history stays and grows
    qtbot.waitUntil(lambda: app.state == Captioning.ON, timeout=5000)
    assert app.controller.session_id == session
    assert without_language_tags(w.history.toPlainText()).startswith(without_language_tags(before))
    assert "Captioning." in w.engine_status.label.text()
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: w.history.toPlainText().count("hello") >= 2, timeout=5000)

    _key(w, Qt.Key.Key_F5)  # Stop ends the session
    qtbot.waitUntil(lambda: app.state == Captioning.OFF, timeout=5000)
    assert not w.act_pause.isEnabled() and w.pause_button.text() == "Pause (F6)"


def test_f6_says_pausing_at_once_while_the_last_words_are_flushed(qtbot, make_app, fake_audio):
    """A real model's last words take seconds to flush (3.7 s measured): the key is answered
    at once, in the window and on the overlay, and "Paused" follows when it is."""
    app = make_app(engine_factory=scripted_factory(flush_s=1.5))
    w = app.window
    asked = []  # what the caption page and its feed are told at once
    app.hub.subscribe(lambda ev: asked.append(ev.what) if isinstance(ev, CaptioningAsked) else None)
    _captioning_with_text(qtbot, app, fake_audio)
    t0 = time.perf_counter()
    _key(w, Qt.Key.Key_F6)
    qtbot.waitUntil(lambda: w.state_label.text().startswith("Paus"), timeout=5000)
    first = time.perf_counter() - t0
    said_first = (w.state_label.text(), app.overlay.status.text)
    qtbot.waitUntil(lambda: w.state_label.text() == "Paused", timeout=10000)
    paused = time.perf_counter() - t0
    print(f"F6 -> {said_first[0]!r} {first * 1000:.0f} ms, -> Paused {paused * 1000:.0f} ms")
    assert said_first[0].startswith("Pausing") and said_first[1].startswith("Pausing"), said_first
    assert first < 0.3, f"F6 answered after {first:.2f} s"
    assert app.overlay.status.text.startswith("Paused")

    _key(w, Qt.Key.Key_F6)  # resuming is said at once too
    assert w.state_label.text().startswith("Resuming"), w.state_label.text()
    qtbot.waitUntil(lambda: app.state == Captioning.ON, timeout=5000)
    assert w.state_label.text() == "Captioning"
    assert asked == ["pausing", "resuming"]


def _question(qtbot) -> QMessageBox:
    found = []

    def box():
        found[:] = [b for b in QApplication.topLevelWidgets()
                    if isinstance(b, QMessageBox) and b.isVisible()]
        return bool(found)
    qtbot.waitUntil(box, timeout=5000)
    return found[0]


def test_closing_the_window_while_captioning_asks_and_keeps_captioning(qtbot, make_app,
                                                                       fake_audio):
    app = make_app()
    _captioning_with_text(qtbot, app, fake_audio)
    app.window.close()  # the ×
    box = _question(qtbot)
    assert "Captioning is on" in box.text()
    assert box.defaultButton().text() == "&Keep captioning"
    QTest.keyClick(box, Qt.Key.Key_Return)  # the default: keep
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=5000)
    assert app.state == Captioning.ON and app.window.isVisible()
    assert not app.controller.closed.is_set()
    qtbot.waitUntil(lambda: not [b for b in app.window.findChildren(QMessageBox)])  # deleted
    assert "Keep captioning" not in str(shortcut_rows(app.window))  # not a key of the window

    app.window.close()  # asked again; this time Quit
    box = _question(qtbot)
    next(b for b in box.buttons() if b.text() == "&Quit voxcap").click()
    assert app.controller.closed.wait(10.0)
    assert not app.window.isVisible()


def test_closing_the_window_when_not_captioning_quits_and_ctrl_q_never_asks(qtbot, make_app,
                                                                           fake_audio):
    idle = make_app()
    qtbot.waitUntil(lambda: idle.window.engine_status.state == "ready", timeout=10000)
    idle.window.close()
    assert idle.controller.closed.wait(10.0)

    busy = make_app()
    _captioning_with_text(qtbot, busy, fake_audio)
    _key(busy.window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert busy.controller.closed.wait(10.0)
    assert not [b for b in QApplication.topLevelWidgets()
                if isinstance(b, QMessageBox) and b.isVisible()]


def test_a_pause_refused_gives_the_state_back(qtbot, make_app, fake_audio):
    """A file cannot be paused: "Pausing…" does not stay; the state is said as it is."""
    app = make_app()
    w = app.window
    _captioning_with_text(qtbot, app, fake_audio)
    fake_audio.live = False  # as a file's audio is
    _key(w, Qt.Key.Key_F6)
    assert w.state_label.text() == "Pausing…"
    qtbot.waitUntil(lambda: "cannot be paused" in w.notice.text(), timeout=5000)
    assert w.state_label.text() == "Captioning" and app.state == Captioning.ON
    assert not app.overlay.status.text  # live captions again: nothing over them
