"""The real tiny vLLM engine (CPU build, the tiny model's weight files) behind the real GUI: the
first run's "Use this" with a folder the user chose starts it, captions appear in the overlay and
the history, the meter shows measured figures, and switching the graph mode restarts the engine
while the captions shown stay and captioning resumes."""

from __future__ import annotations

import pytest

from voxcap.app.controller import default_engine_factory
from voxcap.app.settings import AppSettings
from voxcap.commands.bench import speech_like

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1800)]
START_MS = 600_000  # engine start; minutes on a loaded 2-core machine


def _wait_ready(qtbot, app):
    status = app.window.engine_status
    qtbot.waitUntil(lambda: status.state in ("ready", "failed"), timeout=START_MS)
    assert status.state == "ready", (status.label.text(), status.fix.text())


def _choose_folder_in_the_first_run(qtbot, app, folder):
    """What a user does: "Use a model folder I already have", the folder typed in, its check
    passed, "Use this"."""
    dlg = app.first_run_dialog
    assert dlg is not None and dlg.isVisible()
    dlg.opt_folder.setChecked(True)
    dlg.folder.setText(str(folder))
    qtbot.waitUntil(lambda: dlg.folder_check.text().startswith("✓"), timeout=30_000)
    ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
    assert ok.isEnabled() and ok.text() == "Use this"
    ok.click()


def test_real_engine_behind_the_gui(qtbot, make_app, fake_audio, tiny_weights_dir, tmp_path):
    import shutil

    folder = tmp_path / "My models" / "Voxtral tiny"  # the user's own place, a space in it
    shutil.copytree(tiny_weights_dir, folder)
    settings = AppSettings(enforce_eager=True, max_model_len=2048, graph_mode="FULL_DECODE_ONLY")
    app = make_app(settings, engine_factory=default_engine_factory(), first_run=True)
    _choose_folder_in_the_first_run(qtbot, app, folder)
    _wait_ready(qtbot, app)
    assert app.settings.model_dir == str(folder) and not app.settings.dummy_weights
    status = app.window.engine_status.label.text()
    assert "Graph mode NONE (asked for FULL_DECODE_ONLY)" in status  # CPU: resolved
    assert "Press Start captioning (F5)" in status
    assert "gibberish" not in status  # a weights file: the app takes its words as real

    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=30_000)
    fake_audio.captures["Them"].feed_samples(speech_like(4.0, seed=3))
    qtbot.waitUntil(lambda: len(app.window.history.toPlainText().split()) > 3, timeout=120_000)
    qtbot.waitUntil(lambda: any(app.overlay.visible_text()), timeout=30_000)
    qtbot.waitUntil(lambda: len(app.caption_lag) > 0, timeout=30_000)
    app.tick()
    r = app.sampler.history[-1]
    assert r.tokens_per_s > 0 and r.step_p50_ms > 0 and r.step_p95_ms >= r.step_p50_ms
    assert r.resolved_mode == "NONE" and r.lag_p50_s > 0
    meter = app.window.meter.values
    assert meter["graph"].text() == "NONE (asked: FULL_DECODE_ONLY)"
    assert meter["step"].text().endswith(" ms") and "n/a" not in meter["step"].text()
    assert meter["gpu_mem"].text().startswith("n/a")
    before = app.window.history.toPlainText()

    new = app.settings.copy()
    new.graph_mode = "PIECEWISE"
    app.apply_settings(new)
    qtbot.waitUntil(lambda: app.state == "restarting", timeout=30_000)
    assert "restarting" in app.window.engine_status.label.text()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "loading", timeout=60_000)
    fake_audio.captures["Them"].feed_samples(speech_like(3.0, seed=4))  # held meanwhile
    _wait_ready(qtbot, app)
    assert "(asked for PIECEWISE)" in app.window.engine_status.label.text()
    qtbot.waitUntil(lambda: app.state == "on", timeout=30_000)
    qtbot.waitUntil(lambda: len(app.window.history.toPlainText()) > len(before) + 5,
                    timeout=120_000)
    assert app.window.history.toPlainText().startswith(before)  # captions shown stay
    assert app.controller.held_audio_s() == 0

    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=60_000)
    session = app.current_session()
    assert len(session.labels) == 2 and set(session.labels.values()) == {"Them"}
    assert session.info.settings["graph_mode"] == "PIECEWISE"
