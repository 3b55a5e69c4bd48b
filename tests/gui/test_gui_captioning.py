"""The whole app on the scripted engine: captions in the overlay and the history, the meter, the
graph-mode switch (engine restart with visible progress, captions kept, captioning resumes)."""

from __future__ import annotations

from support.caption_helpers import without_language_tags


def _ready(qtbot, app, timeout=10000):
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=timeout)


def test_ready_with_random_weights_says_the_words_will_be_gibberish(qtbot, make_app):
    from voxcap.app.settings import AppSettings
    from voxcap.engine.choice import EngineChoice

    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model", dummy_weights=True)))
    _ready(qtbot, app)
    text = app.window.engine_status.label.text()
    assert "Press Start captioning (F5). Random weights (self-check): the captions will be " \
           "gibberish, not your speech." in text


def test_captions_reach_overlay_and_history(qtbot, make_app, fake_audio):
    app = make_app()
    _ready(qtbot, app)
    ready = app.window.engine_status.label.text()
    assert "FULL_DECODE_ONLY" in ready
    assert "Press Start captioning (F5)." in ready and "gibberish" not in ready  # the next step
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    assert "Stop" in app.window.start_button.text()
    status = app.window.engine_status.label.text()  # captions run: no "press Start" any more
    assert "Press Start" not in status and "Captioning." in status, status
    fake_audio.feed("Them", 2.0)
    qtbot.waitUntil(lambda: "scripted caption" in app.window.history.toPlainText(), timeout=5000)
    qtbot.waitUntil(lambda: any("tests." in t for t in app.overlay.visible_text()), timeout=5000)
    rows = app.overlay.visible_text()
    assert len(rows) == 2 and "stream for tests." in " ".join(rows)  # the last 2 lines
    history = app.window.history.toPlainText()
    assert history.startswith("[") and "] hello there" in history  # one stream: no label
    qtbot.waitUntil(lambda: len(app.caption_lag) > 0, timeout=5000)  # measured at paint time
    app.tick()
    meter = app.window.meter.values
    assert meter["graph"].text() == "FULL_DECODE_ONLY"
    assert float(meter["tokens"].text()) > 0
    assert meter["step"].text() != "n/a / n/a"
    assert "100% of" in meter["full"].text()
    assert meter["lag"].text().endswith(" s")
    assert meter["gpu_mem"].text().startswith("n/a")  # no NVIDIA GPU here: never a made-up number
    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    assert "Press Start captioning (F5)." in app.window.engine_status.label.text()  # again


def test_two_streams_are_labelled(qtbot, make_app, fake_audio):
    app = make_app()
    app.settings.source = "both"
    _ready(qtbot, app)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 1.0)
    fake_audio.feed("You", 1.0)
    qtbot.waitUntil(lambda: "You: hello" in app.window.history.toPlainText(), timeout=5000)
    text = app.window.history.toPlainText()
    assert "Them: hello" in text
    qtbot.waitUntil(lambda: any(t.startswith("You: ") for t in app.overlay.visible_text()),
                    timeout=5000)


def test_graph_mode_switch_restarts_engine_and_keeps_captions(qtbot, make_app, fake_audio):
    app = make_app()
    _ready(qtbot, app)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 1.0)
    qtbot.waitUntil(lambda: "scripted" in app.window.history.toPlainText(), timeout=5000)
    before = app.window.history.toPlainText()
    seen = []
    app.bridge.events.connect(lambda ev: seen.append(type(ev).__name__))

    new = app.settings.copy()
    new.engine.graph_mode = "PIECEWISE"
    app.settings_control.apply(new)
    qtbot.waitUntil(lambda: "EngineRestarting" in seen, timeout=5000)
    qtbot.waitUntil(lambda: app.state == "restarting", timeout=5000)
    fake_audio.feed("Them", 1.0)  # spoken during the restart: held, captioned after
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    assert "EngineProgress" in seen[seen.index("EngineRestarting"):]  # visible progress
    assert "PIECEWISE" in app.window.engine_status.label.text()
    assert "Press Start" not in app.window.engine_status.label.text()  # it is on already
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    qtbot.waitUntil(lambda: app.window.history.toPlainText().count("scripted") >= 2, timeout=5000)
    now = app.window.history.toPlainText()
    assert without_language_tags(now).startswith(without_language_tags(before))  # nothing lost
    app.tick()
    assert app.window.meter.values["graph"].text() == "PIECEWISE"
    session = app.exports.current_session()
    assert session.info.settings["graph_mode"] == "PIECEWISE"
    assert len(session.labels) == 2  # one stream before, one after the restart, one session
