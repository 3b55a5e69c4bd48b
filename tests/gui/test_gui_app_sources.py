"""The GUI side of per-application sources and echo cancellation (offscreen Qt, scripted engine,
fake audio; the capture itself is tested against real servers in tests/audio)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from voxcap.app.settings import AppSettings, load_settings
from voxcap.capture.apps import AppInfo, AppStream
from voxcap.engine.choice import EngineChoice
from voxcap.events import AppsChanged, Captioning

FIREFOX = AppInfo("Firefox", "firefox", "firefox", (AppStream(7, 0, "Quarterly review", False),))


def test_picker_lists_apps_and_starts_with_the_echo_setting(qtbot, make_app, fake_audio):
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"), echo_cancel="off"))
    w = app.window
    app.on_event(AppsChanged((FIREFOX,)))
    texts = [w.source.itemText(i) for i in range(w.source.count())]
    assert "Firefox — Quarterly review (application)" in texts
    assert w.source.findData("app:Firefox") >= 0 and w.source.findData("both:Firefox") >= 0
    app.on_event(AppsChanged(()))  # it stopped playing: gone from the list
    assert w.source.findData("app:Firefox") < 0
    app.on_event(AppsChanged((FIREFOX,)))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.choose_source("both:Firefox")
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert app.controller.audio.echo_cancel == "off"  # the setting reaches the capture layer
    assert "Them: fake device" in w.meter.values["sources"].text()
    assert "(You: captions of fake device)" in w.history.toPlainText()


def test_echo_setting_round_trip(qtbot, make_app, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    assert dlg.captions_panel.echo.currentData() == "auto"
    dlg.captions_panel.echo.setCurrentIndex(dlg.captions_panel.echo.findData("on"))
    dlg.buttons.accepted.emit()
    assert app.settings.echo_cancel == "on"
    assert load_settings()[0].echo_cancel == "on"


def test_a_half_of_both_that_cannot_start_is_named_next_to_the_state(qtbot, make_app, fake_audio,
                                                                    monkeypatch):
    """The controller goes on with "Them" (tests/app/test_controller_pairs.py, real servers);
    the window keeps saying so after later notices replace the problem's."""
    from voxcap.errors import CaptureError
    from voxcap.events import CaptureDeviceChanged

    real_open = fake_audio.open

    def open_(spec, on_block, on_event):
        if spec.label == "You":
            raise CaptureError("There is no microphone or other input device.",
                               "connect or enable a microphone")
        return real_open(spec, on_block, on_event)

    monkeypatch.setattr(fake_audio, "open", open_)
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)
    app.choose_source("both")
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert w.state_label.text() == "Captioning (Them only)"
    assert w.notice.text().startswith("You: There is no microphone")
    app.on_event(CaptureDeviceChanged("Them", "a", "b", "moved", "Them: now capturing b"))
    assert w.state_label.text() == "Captioning (Them only)"  # still said after the notice changed
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=10000)
    assert w.state_label.text() == "Not captioning"


def test_microphone_choices_are_unavailable_without_a_microphone(qtbot, make_app):
    """The issue: the list offered "Microphone" and "Both" on a computer without one."""
    from support.gui_fakes import DEVICES

    from voxcap.events import DevicesChanged

    app = make_app()
    w = app.window
    qtbot.waitUntil(lambda: w.source.count() > 3, timeout=5000)

    def offered(key: str) -> bool:
        return w.source.model().item(w.source.findData(key)).isEnabled()
    assert offered("mic") and offered("both") and offered("system")
    monitors = tuple(d for d in DEVICES if d.is_monitor)
    app.on_event(DevicesChanged(monitors, True))  # the microphone unplugged
    assert not offered("mic") and not offered("both") and offered("system")
    assert "No microphone" in w.source.itemData(w.source.findData("mic"),
                                                 Qt.ItemDataRole.ToolTipRole)
    app.on_event(DevicesChanged(DEVICES, True))  # plugged in again
    assert offered("mic") and offered("both")


def test_the_last_source_chosen_is_the_one_captioned(qtbot, make_app, fake_audio):
    """Up, Up in the source list while captioning "Both": the second choice landed while the
    first restart was still running (the window between its stop and its start) and was
    dropped, so the microphone was captioned while the list said system audio."""
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"), source="both"))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    app.choose_source("mic")
    # the first switch's "off" has reached the window, its start has not yet: the moment the
    # second key press landed in (forced here: polling for it misses it on a fast engine)
    app.state = Captioning.OFF
    app.choose_source("system")
    qtbot.waitUntil(lambda: app.state == "on" and app.controller.state == "on", timeout=5000)
    qtbot.wait(300)  # any switch still queued has run
    assert app.settings.source == "system"
    assert app.controller.state == "on" and app.controller._sources.asked == "system"
    # the overlay names it: its reader sees what is captioned now (the day walk: rows only)
    qtbot.waitUntil(lambda: app.overlay.status.text == "Now captioning Them: fake device",
                    timeout=5000)


def test_a_chosen_app_that_stops_playing_is_still_named_in_words(qtbot, make_app):
    """The day walk: paplay chosen, then it ended; the box showed its key "app:paplay"."""
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    w = app.window
    for key, words in (("app:Firefox", "Firefox (application)"),
                       ("both:Firefox", "Both: Firefox and the microphone")):
        app.on_event(AppsChanged((FIREFOX,)))
        w.set_source(key)
        app.on_event(AppsChanged(()))  # it stopped playing
        assert (w.source.currentText(), w.source.currentData()) == (words, key)
