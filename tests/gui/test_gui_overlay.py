"""The overlay: geometry restore (monitor gone included), click-through, labels, legibility."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from voxcap.app.settings import AppSettings, OverlaySettings, load_settings
from voxcap.captions.assembly import CaptionAssembler
from voxcap.engine.choice import EngineChoice
from voxcap.events import TextDelta
from voxcap.gui.overlay.window import CaptionOverlay, place_overlay

SCREENS = [("DP-1", (0, 0, 1920, 1050)), ("HDMI-1", (1920, 0, 2560, 1410))]


def test_place_on_saved_monitor():
    assert place_overlay((2000, 1200, 1000, 120), "HDMI-1", SCREENS, 0, 100) == (2000, 1200, 1000, 120)
    # partly off its monitor (e.g. after a resolution change): pulled back inside
    assert place_overlay((4000, 1350, 1000, 120), "HDMI-1", SCREENS, 0, 100) == (3480, 1290, 1000, 120)


def test_place_when_monitor_is_gone():
    # it was on HDMI-1, which is unplugged: back on the primary, size kept, bottom centre
    x, y, w, h = place_overlay((2000, 1200, 1000, 120), "HDMI-1", SCREENS[:1], 0, 100)
    assert (w, h) == (1000, 120)
    assert 0 <= x and x + w <= 1920 and 0 <= y and y + h <= 1050
    assert x == (1920 - 1000) // 2
    # too wide for what is left: shrunk to fit
    assert place_overlay((1920, 0, 2500, 130), "HDMI-1", SCREENS[:1], 0, 100)[2] == 1920


def test_place_first_run():
    x, y, w, h = place_overlay(None, "", SCREENS, 1, 110)
    assert 1920 <= x and x + w <= 1920 + 2560 and h == 110 and y + h < 1410


def test_app_restores_geometry_and_recovers_from_missing_monitor(qtbot, make_app):
    s = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    s.overlay.geometry, s.overlay.screen = [8000, 5000, 700, 110], "DP-9"  # that monitor is gone
    app = make_app(s)
    screen = app.overlay.screen().availableGeometry()
    g = app.overlay.geometry()
    assert screen.contains(g), (g, screen)
    assert (g.width(), g.height()) == (700, 110)
    # a geometry on the existing screen comes back exactly
    name = app.overlay.screen().name()
    s2 = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    s2.overlay.geometry, s2.overlay.screen = [40, 50, 640, 120], name
    app2 = make_app(s2)
    assert app2.overlay.geometry().getRect() == (40, 50, 640, 120)


def test_drag_moves_and_is_saved(qtbot, make_app):
    app = make_app()
    ov = app.overlay
    ov.setGeometry(100, 100, 600, 120)
    start = ov.geometry().topLeft()
    qtbot.mousePress(ov, Qt.MouseButton.LeftButton, pos=QPoint(300, 60))
    qtbot.mouseMove(ov, QPoint(350, 80))
    qtbot.mouseRelease(ov, Qt.MouseButton.LeftButton, pos=QPoint(350, 80))
    assert ov.geometry().topLeft() == start + QPoint(50, 20)
    assert app.settings.overlay.geometry[:2] == [150, 120]
    # a drag at the right edge resizes instead
    qtbot.mousePress(ov, Qt.MouseButton.LeftButton, pos=QPoint(597, 60))
    qtbot.mouseMove(ov, QPoint(697, 60))
    qtbot.mouseRelease(ov, Qt.MouseButton.LeftButton, pos=QPoint(697, 60))
    assert ov.width() == 700 and app.settings.overlay.geometry[2] == 700


def test_a_move_just_before_quitting_is_saved_by_the_quit_and_nothing_after(qtbot, make_app,
                                                                          tmp_path, monkeypatch):
    """The overlay saves its place 0.4 s after it moves (a drag or the compositor sends many
    moves): one moved just before Ctrl+Q is saved as the app quits, and nothing is written
    after that (a save still pending would write these settings into whatever settings folder
    is current by then: in the tests, the next test's)."""
    app = make_app()
    ov = app.overlay
    ov.move(ov.x() + 40, ov.y() + 10)
    assert ov._save_timer.isActive()  # the move's save is pending
    app.window.act_quit.trigger()
    assert load_settings()[0].overlay.geometry[:2] == [ov.x(), ov.y()]
    later = tmp_path / "later"
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(later))
    qtbot.wait(800)
    assert not later.exists()


def test_click_through_toggles_and_there_is_a_way_back(qtbot, make_app):
    app = make_app()
    ov, w = app.overlay, app.window
    assert not ov.click_through
    w.act_click.trigger()  # Ctrl+T / View menu / the window's button
    assert ov.click_through and app.settings.overlay.click_through
    assert ov.windowFlags() & Qt.WindowType.WindowTransparentForInput
    assert ov.testAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
    assert ov.isVisible()
    assert "Turn it off" in ov._hint  # the overlay says how to get back
    assert w.click_button.isChecked()
    geom = ov.geometry()
    qtbot.mousePress(ov, Qt.MouseButton.LeftButton, pos=QPoint(30, 30))  # passes through
    qtbot.mouseMove(ov, QPoint(130, 30))
    qtbot.mouseRelease(ov, Qt.MouseButton.LeftButton, pos=QPoint(130, 30))
    assert ov.geometry() == geom
    app.handle_message("toggle-click-through")  # from `voxcap gui --toggle-click-through`
    assert not ov.click_through and not w.act_click.isChecked()
    assert not ov.windowFlags() & Qt.WindowType.WindowTransparentForInput
    w.click_button.click()
    assert ov.click_through
    w.act_click.trigger()
    assert not ov.click_through and not app.settings.overlay.click_through


def test_overlay_hide_show_and_reset(qtbot, make_app):
    app = make_app()
    app.window.act_overlay.trigger()
    assert not app.overlay.isVisible() and not app.settings.overlay.visible
    app.overlay.setGeometry(5, 5, 300, 60)
    app.window.act_reset_overlay.trigger()
    assert app.overlay.isVisible() and app.overlay.width() > 300


def _deltas(sid, words, start=0.0):
    out = []
    for i, w in enumerate(words):
        out.append(TextDelta(sid, " " + w, (i,), i, start + i * 0.08, start + (i + 1) * 0.08, 0.0))
    return out


def test_text_only_grows_and_older_rows_stay_put(qtbot):
    ov = CaptionOverlay(OverlaySettings(lines=3, font_size=20))
    qtbot.addWidget(ov)
    ov.resize(420, ov.fitted_height())
    ov.show()
    asm = CaptionAssembler(width=160)
    words = "the quick brown fox jumps over the lazy dog and keeps running far away".split()
    seen = []
    for d in _deltas("s1", words):
        ov.add_updates(asm.feed(d))
        rows = ov.visible_text()
        seen.append(rows)
    # every row that scrolled up is a row that was shown before, unchanged (no re-wrapping)
    for before, after in zip(seen, seen[1:], strict=False):
        for row in after[:-1]:
            assert row in before or any(b.startswith(row) for b in before), (before, after)
    assert len(seen[-1]) <= 3


def test_labels_with_two_streams(qtbot):
    ov = CaptionOverlay(OverlaySettings(lines=4))
    qtbot.addWidget(ov)
    ov.resize(1200, ov.fitted_height())
    ov.show_labels = True
    asm = CaptionAssembler(width=160, labels={"a": "Them", "b": "You"})
    for d in _deltas("a", ["hello", "there"]) + _deltas("b", ["hi", "back"], start=0.0):
        ov.add_updates(asm.feed(d))
    ov.add_updates(asm.finish("a") + asm.finish("b"))
    assert ov.visible_text() == ["Them: hello there", "You: hi back"]
    assert ov.label_color("Them") != ov.label_color("You")
