"""After Stop captioning the overlay's last rows stay for a reading time, then clear; the history
and the session's transcript keep them; captioning again starts the overlay blank."""

from __future__ import annotations

import time

from voxcap.gui.overlay.linger import MAX_MS, MIN_MS, reading_time_ms

HOLD_MS = 1500  # the test's reading time (the app's is 5-15 s)


def test_reading_time_follows_the_text_length():
    assert reading_time_ms(["ok"]) == MIN_MS
    assert reading_time_ms(["x" * 75, "y" * 75]) == 10_000  # 150 characters at 15 a second
    assert reading_time_ms(["z" * 1000]) == MAX_MS


def _caption(qtbot, app, fake_audio):
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: any("tests." in t for t in app.overlay.visible_text()), timeout=5000)


def test_the_last_line_stays_to_be_read_then_goes(qtbot, make_app, fake_audio):
    app = make_app()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    asked = []
    app.overlay_linger.reading_time = lambda rows: asked.append(list(rows)) or HOLD_MS
    _caption(qtbot, app, fake_audio)
    app.window.act_start.trigger()  # Stop captioning
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    stopped = time.monotonic()
    shown = app.overlay.visible_text()
    assert any("tests." in t for t in shown)  # still there to be read
    assert asked == [shown] and app.overlay_linger.timer.isActive()
    qtbot.waitUntil(lambda: app.overlay.visible_text() == [], timeout=HOLD_MS + 5000)
    assert time.monotonic() - stopped >= HOLD_MS / 1000 - 0.2  # not before its time
    assert app.overlay.accessibleDescription() == "Stopped — not captioning"  # screen readers too
    history = app.window.history.toPlainText()
    assert "stream for tests." in history  # nothing lost
    words = " ".join(w.text for w in app.exports.current_session().words())
    assert "tests." in words  # nor from the transcript


def test_captioning_again_starts_blank_and_cancels_the_wait(qtbot, make_app, fake_audio):
    app = make_app()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.overlay_linger.reading_time = lambda rows: 60_000
    _caption(qtbot, app, fake_audio)
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    assert app.overlay.visible_text() and app.overlay_linger.timer.isActive()
    app.window.act_start.trigger()  # again, within the reading time
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert app.overlay.visible_text() == [] and not app.overlay_linger.timer.isActive()
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: any("tests." in t for t in app.overlay.visible_text()), timeout=5000)
    assert not app.overlay_linger.timer.isActive()  # captioning: nothing will clear it
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
