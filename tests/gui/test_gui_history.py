"""The caption history: search, copy, export (SRT/VTT/TXT), previous sessions, keyboard access."""

from __future__ import annotations

import srt
import webvtt
from PySide6.QtWidgets import QApplication


def _caption(qtbot, app, fake_audio, seconds=2.0):
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", seconds)
    word = "tests." if seconds >= 2 else "this"
    qtbot.waitUntil(lambda: word in app.window.history.toPlainText(), timeout=5000)


def test_search_copy_and_export_from_history(qtbot, make_app, fake_audio, tmp_path):
    app = make_app()
    _caption(qtbot, app, fake_audio)
    w = app.window
    w.act_find.trigger()
    assert w.search.edit.hasFocus() or not w.isActiveWindow()
    w.search.edit.setText("SCRIPTED")
    assert w.search.find_next()
    assert w.history.textCursor().selectedText() == "scripted"
    assert "1 match" in w.search.result.text()
    w.search.edit.setText("nowhere")
    assert not w.search.find_next() and w.search.result.text() == "No match"
    # a screen reader reads the result itself, not a fixed "Search result" (seen in a long walk)
    from PySide6.QtGui import QAccessible
    name = QAccessible.queryAccessibleInterface(w.search.result).text(QAccessible.Text.Name)
    assert name == "No match", name

    w.act_copy.trigger()
    assert "hello there" in QApplication.clipboard().text()

    # while captioning: from the journal being written
    out = app.exports.export_session(app.exports.current_session(), str(tmp_path / "live.srt"))
    cues = list(srt.parse(open(out, encoding="utf-8").read()))
    assert cues and "hello there" in " ".join(c.content for c in cues)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    # after: from the closed session
    vtt = app.exports.export_session(app.exports.current_session(), str(tmp_path / "after.vtt"))
    assert "scripted caption" in " ".join(c.text for c in webvtt.read(vtt))
    txt = app.exports.export_session(app.exports.current_session(), str(tmp_path / "after.txt"))
    assert open(txt, encoding="utf-8").read().startswith("[00:00:00] hello there")
    assert app.exports.export_session(app.exports.current_session(), str(tmp_path / "bad.doc")) is None
    assert "Export failed" in w.notice.text()


def test_previous_sessions(qtbot, make_app, fake_audio, tmp_path):
    app = make_app()
    _caption(qtbot, app, fake_audio, 1.0)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    w = app.window
    w.act_tab_sessions.trigger()
    assert w.tabs.currentIndex() == 1
    assert w.sessions.list.count() == 1
    w.sessions.list.setCurrentRow(0)
    assert "hello there" in w.sessions.text.toPlainText()
    assert "<1 min of audio, Them" in w.sessions.info.text()  # its length, not "130 steps"
    assert "steps" not in w.sessions.info.text()
    assert w.sessions.export_button.isEnabled()
    out = app.exports.export_session(w.sessions.session, str(tmp_path / "old.srt"))
    assert "hello" in open(out, encoding="utf-8").read()
    # a new captioning session starts a fresh history
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    # only the line saying where the new session's stream comes from
    assert w.history.toPlainText().endswith("(Them: captions of fake device)")
    assert "hello" not in w.history.toPlainText()


def test_previous_sessions_lists_an_earlier_runs_sessions_when_its_tab_is_chosen(
        qtbot, make_app, fake_audio):
    """The walk: after a relaunch, Alt+P (or a click) showed an empty list until Refresh."""
    first = make_app()
    _caption(qtbot, first, fake_audio, 1.0)
    first.toggle_captioning()
    qtbot.waitUntil(lambda: first.state == "off", timeout=5000)
    w = make_app().window  # the app started again
    w.tabs.setCurrentIndex(1)  # what the tab's mnemonic and a click do
    assert w.sessions.list.count() == 1


def test_keyboard_and_accessible_names(qtbot, make_app):
    app = make_app()
    w = app.window
    shortcuts = {a.text().replace("&", ""): a.shortcut().toString() for a in w.actions()
                 if not a.shortcut().isEmpty()}
    for name in ("Start captioning", "Find…", "Export captions…", "Overlay click-through",
                 "Show captions overlay", "Settings…", "Quit", "Throughput meter"):
        assert name in shortcuts, shortcuts
    for widget in (w.start_button, w.source, w.history, w.search.edit,
                   w.sessions.list, w.meter, app.overlay):
        assert widget.accessibleName(), widget
    # status labels: the name is the text itself (a fixed name would hide it; the engine
    # status names it without its break marks), the description says what it is (read
    # through AT-SPI in test_gui_atspi.py)
    for label in (w.engine_status.label, w.state_label, w.notice, *w.meter.values.values()):
        assert label.accessibleName() in ("", label.text().replace("\u200b", "")), label
        assert label.accessibleDescription(), label
    assert w.history.isReadOnly()
    assert w.history.textInteractionFlags() & w.history.textInteractionFlags().TextSelectableByKeyboard


def test_source_picker_lists_devices(qtbot, make_app, fake_audio):
    app = make_app()
    w = app.window
    qtbot.waitUntil(lambda: w.source.count() > 3, timeout=5000)
    items = [w.source.itemText(i) for i in range(w.source.count())]
    assert "Virtual Microphone (input)" in items
    w.source.setCurrentIndex(items.index("Virtual Microphone (input)"))
    w.source.activated.emit(w.source.currentIndex())
    assert app.settings.source == "Virtual Microphone"
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert list(fake_audio.captures) == ["Virtual Microphone"]


def test_devices_with_one_description_are_told_apart(qtbot, make_app, fake_audio):
    from voxcap.capture.devices import DeviceInfo

    app = make_app()
    w = app.window
    twins = [DeviceInfo("alsa_output.usb-a.monitor", "Monitor of USB Audio", "monitor", False),
             DeviceInfo("alsa_output.usb-b.monitor", "Monitor of USB Audio", "monitor", False),
             DeviceInfo("virtmic", "Virtual Microphone", "input", True)]
    w.set_devices(twins)
    items = {w.source.itemText(i): w.source.itemData(i) for i in range(w.source.count())}
    assert items["Monitor of USB Audio (system audio: alsa_output.usb-a.monitor)"] == \
        "alsa_output.usb-a.monitor"
    assert items["Monitor of USB Audio (system audio: alsa_output.usb-b.monitor)"] == \
        "alsa_output.usb-b.monitor"
    assert items["Virtual Microphone (input)"] == "Virtual Microphone"


def test_meter_dock_survives_hiding_the_window(qtbot, make_app):
    app = make_app()
    w = app.window
    assert w.meter_dock.isVisible() and w.act_meter.isChecked()
    w.hide()  # minimised to a tray, or the screenshot script
    w.show()
    assert w.meter_dock.isVisible() and w.act_meter.isChecked() and app.window_state.show_meter
    w.act_meter.trigger()
    assert not w.meter_dock.isVisible() and not app.window_state.show_meter
