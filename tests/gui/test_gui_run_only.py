"""Command-line overrides are for one run; Help > Copy diagnostics; restart policy via the app."""

from __future__ import annotations

import json

from voxcap.app.settings import AppSettings, RunOverrides, save_settings, settings_path
from voxcap.engine.choice import EngineChoice


def test_gui_graph_mode_override_is_used_but_never_saved(make_app, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    stored = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model", graph_mode="FULL_DECODE_ONLY",
                                             delay_ms=480))
    save_settings(stored)
    overrides = RunOverrides(stored, {"engine.graph_mode": "PIECEWISE", "source": None})
    app = make_app(overrides.apply(), overrides=overrides, persist=True)
    assert app.settings.engine.graph_mode == "PIECEWISE"
    app.choose_source("mic")  # any change saves the settings
    saved = json.loads(settings_path().read_text())
    assert saved["engine"]["graph_mode"] == "FULL_DECODE_ONLY" and saved["source"] == "mic"
    changed = app.settings.copy()  # the person changes other engine settings in the panel
    changed.engine.delay_ms = 960
    app.settings_control.apply(changed)
    saved = json.loads(settings_path().read_text())
    assert saved["engine"]["delay_ms"] == 960 and saved["engine"]["graph_mode"] == "FULL_DECODE_ONLY"
    chosen = app.settings.copy()  # ... and then picks a graph mode themselves: theirs, saved
    chosen.engine.graph_mode = "FULL_AND_PIECEWISE"
    app.settings_control.apply(chosen)
    assert json.loads(settings_path().read_text())["engine"]["graph_mode"] == "FULL_AND_PIECEWISE"


def test_run_overrides_alone():
    stored = AppSettings(engine=EngineChoice(model_dir="/m"), source="mic")
    o = RunOverrides(stored, {"source": "both", "engine.graph_mode": None})
    used = o.apply()
    assert used.source == "both" and o.values == {"source": "both"}
    assert o.for_saving(used).source == "mic"
    used.source = "system"
    assert o.for_saving(used).source == "system"


def test_copy_diagnostics_puts_log_and_doctor_on_the_clipboard(make_app, qtbot):
    from PySide6.QtWidgets import QApplication

    from voxcap import logs

    logs.setup(None)
    import logging

    logging.getLogger("voxcap.test").warning("a line the report must carry")
    app = make_app()
    QApplication.clipboard().setText("")
    app.window.act_diagnostics.trigger()
    qtbot.waitUntil(lambda: "voxcap doctor --json" in QApplication.clipboard().text(),
                    timeout=120_000)
    text = QApplication.clipboard().text()
    assert "a line the report must carry" in text
    doctor = text.split("--- voxcap doctor --json\n", 1)[1].split("\n\n--- the last", 1)[0]
    assert json.loads(doctor)["checks"]  # the real doctor's JSON
