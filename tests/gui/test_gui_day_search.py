"""Ctrl+F finds words of the day's earlier sessions too (Stop then Start clears the history, not
the day), and Enter on a hit opens that session; Previous sessions shows each session's date,
time, length and state in full, the list as wide as its rows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from voxcap.events import Captioning


def _session_with_text(qtbot, app, fake_audio):
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == Captioning.ON, timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: "scripted caption" in app.window.history.toPlainText(), timeout=5000)
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == Captioning.OFF, timeout=5000)


def test_find_reaches_the_days_earlier_sessions(qtbot, make_app, fake_audio):
    app = make_app()
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)
    _session_with_text(qtbot, app, fake_audio)
    morning = app.controller.session_id
    w.act_start.trigger()  # a new session: the history starts empty
    qtbot.waitUntil(lambda: app.state == Captioning.ON, timeout=5000)
    assert "scripted" not in w.history.toPlainText()

    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    QTest.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is w.search.edit
    QTest.keyClicks(w.search.edit, "SCRIPTED caption")
    QTest.keyClick(w.search.edit, Qt.Key.Key_Return)
    assert w.search.result.text() == "No match"  # not in this session...
    qtbot.waitUntil(lambda: w.day_search.hits.count() > 0, timeout=5000)  # ...but this morning
    assert w.day_search.isVisible() and "1 session" in w.day_search.result.text()
    hit = w.day_search.hits.item(0)
    assert "Them" in hit.text() and "scripted caption" in hit.text()

    w.day_search.hits.setFocus()
    w.day_search.hits.setCurrentRow(0)
    QTest.keyClick(w.day_search.hits, Qt.Key.Key_Return)
    assert w.tabs.currentIndex() == 1
    assert w.sessions.session is not None and w.sessions.session.session_id == morning
    assert "scripted caption" in w.sessions.text.toPlainText()


def test_previous_sessions_rows_show_when_how_long_and_state_in_full(qtbot, make_app, fake_audio):
    app = make_app()
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)
    _session_with_text(qtbot, app, fake_audio)
    w.resize(1000, 600)
    w.act_tab_sessions.trigger()
    QApplication.processEvents()
    info = w.sessions.store.list()[0]
    row = info.summary()
    item = w.sessions.list.item(0)
    text = item.text()
    assert text.startswith(f"{row.date} {row.time}  {row.length}, finished")
    assert info.session_id not in text and info.session_id in item.toolTip()
    metrics = w.sessions.list.fontMetrics()
    shown = w.sessions.list.viewport().width()
    assert metrics.horizontalAdvance(text) + 2 * w.sessions.list.spacing() < shown, (text, shown)
