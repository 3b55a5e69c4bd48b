"""The Settings dialog offers exactly what a setting may be (its declaration in app/settings.py):
every range and every list of choices, so that a saved value at either end of its range survives
opening Settings and pressing OK."""

from __future__ import annotations

import dataclasses
import re

import pytest
from PySide6.QtWidgets import QDoubleSpinBox

from voxcap.app.settings import (
    AppSettings,
    OverlaySettings,
    ShareSettings,
    load_settings,
    save_settings,
)
from voxcap.commands.flag_words import in_flags
from voxcap.engine.choice import EngineChoice
from voxcap.engine.delays import PRESETS
from voxcap.gui.settings.setting_words import for_the_app
from voxcap.setting_refs import ref
from voxcap.settings_schema import specs

# the dialog's widget (attribute path) for each setting that has a range, and the factor
# between the stored value and the one shown (opacity: a fraction stored, percent shown)
RANGED = {
    "engine_panel.kv": (EngineChoice, "kv_cache_gib", 1),
    "engine_panel.max_len": (EngineChoice, "max_model_len", 1),
    "overlay_panel.lines": (OverlaySettings, "lines", 1),
    "overlay_panel.font_size": (OverlaySettings, "font_size", 1),
    "overlay_panel.opacity": (OverlaySettings, "background_opacity", 100),
    "share.port": (ShareSettings, "port", 1),
    "captions_panel.no_captions_after": (AppSettings, "no_captions_after_s", 1),
    "captions_panel.fresh_session_after": (AppSettings, "fresh_session_after_s", 1),
    "captions_panel.no_sound_after": (AppSettings, "no_sound_after_s", 1),
}
CHOICES = {"engine_panel.engine": (EngineChoice, "kind"),
           "engine_panel.graph_mode": (EngineChoice, "graph_mode"),
           "engine_panel.precision": (EngineChoice, "precision"),
           "captions_panel.echo": (AppSettings, "echo_cancel")}


def _widget(dlg, path: str):
    for name in path.split("."):
        dlg = getattr(dlg, name)
    return dlg


def _group(settings: AppSettings, cls):
    return {AppSettings: settings, EngineChoice: settings.engine, OverlaySettings: settings.overlay,
            ShareSettings: settings.share}[cls]


def _typed(cls, name: str, value):
    annotation = str(next(f.type for f in dataclasses.fields(cls) if f.name == name))
    return int(value) if annotation.startswith("int") else float(value)


def _open_settings(qtbot, settings):
    from voxcap.gui.settings.dialog import SettingsDialog

    dlg = SettingsDialog(settings)
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def test_every_ranged_setting_has_its_widget():
    declared = {(cls, name) for cls in (AppSettings, EngineChoice, OverlaySettings, ShareSettings)
                for name, spec in specs(cls).items() if spec.low is not None}
    assert declared == {(cls, name) for cls, name, _factor in RANGED.values()}


def test_the_dialog_offers_each_setting_s_range_and_choices(qtbot):
    dlg = _open_settings(qtbot, AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    for path, (cls, name, factor) in RANGED.items():
        spec, widget = specs(cls)[name], _widget(dlg, path)
        # None ("Automatic") is shown as the value just below the range
        smallest = 10 ** -widget.decimals() if isinstance(widget, QDoubleSpinBox) else 1
        low = widget.minimum() + (smallest if spec.automatic else 0)
        if spec.automatic:
            assert widget.specialValueText(), path
        assert (low, widget.maximum()) == pytest.approx(
            (spec.low * factor, spec.high * factor), abs=0.05), path
    for attr, (cls, name) in CHOICES.items():
        combo = _widget(dlg, attr)
        offered = [(combo.itemData(i), combo.itemText(i)) for i in range(combo.count())]
        assert offered == list(specs(cls)[name].choices), attr
    # the delays: the presets first, then the other trained ones (no separator's None)
    box = dlg.engine_panel.delay.box
    offered = [(box.itemData(i), box.itemText(i)) for i in range(box.count())
               if box.itemData(i) is not None]
    assert sorted(offered) == list(specs(EngineChoice)["delay_ms"].choices)
    assert [ms for ms, _text in offered[:4]] == [p.delay_ms for p in PRESETS]


@pytest.mark.parametrize("end", ["low", "high"])
def test_a_saved_value_at_either_end_survives_settings_and_ok(qtbot, tmp_path, end):
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
    for cls, name, _factor in RANGED.values():
        setattr(_group(settings, cls), name, _typed(cls, name, getattr(specs(cls)[name], end)))
    save_settings(settings, tmp_path / "settings.json")
    dlg = _open_settings(qtbot, load_settings(tmp_path / "settings.json")[0])
    with qtbot.waitSignal(dlg.applied) as applied:
        dlg.buttons.accepted.emit()
    save_settings(applied.args[0], tmp_path / "settings.json")
    saved, problem = load_settings(tmp_path / "settings.json")
    assert problem is None
    for cls, name, _factor in RANGED.values():
        assert getattr(_group(saved, cls), name) == pytest.approx(
            getattr(_group(settings, cls), name)), name


def test_a_flag_in_a_message_names_the_row_settings_shows(qtbot):
    """The core's fixes name flags (``--kv-cache-gib``); the app says the row of Settings →
    Engine that the dialog shows, whatever its label is."""
    dlg = _open_settings(qtbot, AppSettings())
    panel = dlg.engine_panel
    for attr, name in (("server_model", "server_model"), ("precision", "precision"),
                       ("max_len", "max_model_len"), ("kv", "kv_cache_gib"),
                       ("graph_mode", "graph_mode")):
        label = panel.form.labelForField(getattr(panel, attr)).text()
        row = re.sub(r" \(.*\)", "", label.replace("&", "").rstrip(":"))
        flag = specs(EngineChoice)[name].flag
        assert for_the_app(f"too long (lower {ref(name)})") == f"too long (lower Settings → Engine → {row})"
        assert in_flags(f"too long (lower {ref(name)})") == f"too long (lower {flag})"
