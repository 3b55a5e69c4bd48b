"""Settings: file round trip, damaged files, the settings panel."""

from __future__ import annotations

import json

from voxcap.app.settings import AppSettings, load_settings, save_settings, settings_path
from voxcap.engine.choice import EngineChoice


def test_round_trip(tmp_path):
    s = AppSettings(engine=EngineChoice(model_dir="/models/voxtral", graph_mode="PIECEWISE", delay_ms=960,
                                        kv_cache_gib=2.5), source="Virtual Microphone", mask_profanity=True)
    s.overlay.lines = 4
    s.overlay.font_family = "DejaVu Serif"
    s.overlay.background_opacity = 0.3
    path = save_settings(s, tmp_path / "settings.json")
    loaded, problem = load_settings(path)
    assert problem is None
    assert loaded == s
    assert json.loads(path.read_text())["overlay"]["lines"] == 4


def test_default_location_is_the_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    assert load_settings() == (AppSettings(), None)  # nothing saved yet: defaults, no message
    save_settings(AppSettings(engine=EngineChoice(model_dir="/m")))
    assert settings_path() == tmp_path / "cfg" / "settings.json"
    assert load_settings()[0].engine.model_dir == "/m"


def test_corrupt_file_is_backed_up_and_defaults_used(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"model_dir": "/m", "overlay": {"lines": 3')  # cut off
    settings, problem = load_settings(path)
    assert settings == AppSettings()
    assert "damaged" in problem and "corrupt-" in problem
    backups = list(tmp_path.glob("settings.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes().startswith(b'{"model_dir"')
    assert not path.exists()
    path.write_text("[1, 2]")  # JSON, but not settings
    settings, problem = load_settings(path)
    assert settings == AppSettings() and "not a JSON object" in problem


def test_bad_values_fall_back_one_by_one(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model_dir": "/m", "graph_mode": "FULL", "delay_ms": 500,
                                "overlay": {"lines": 9, "font_size": 40, "text_color": "red"},
                                "future_setting": 1}))
    settings, problem = load_settings(path)
    assert settings.engine.model_dir == "/m" and settings.overlay.font_size == 40  # kept
    assert settings.engine.graph_mode == "FULL_DECODE_ONLY" and settings.engine.delay_ms == 480
    assert settings.overlay.lines == 2 and settings.overlay.text_color == "#ffffff"
    for name in ("graph_mode", "delay_ms", "overlay.lines", "overlay.text_color"):
        assert name in problem
    assert "future_setting" not in problem  # unknown keys are ignored quietly


def test_settings_problem_is_shown(qtbot, make_app):
    app = make_app(problem="The settings file was damaged; the defaults are used.")
    assert "damaged" in app.window.notice.text()


def test_settings_panel_round_trip(qtbot, make_app, tmp_path, monkeypatch, tiny_model_dir):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    eng = dlg.engine_panel
    assert dlg is not None and dlg.isVisible()
    qtbot.waitUntil(lambda: eng.model_ok is False, timeout=5000)  # checked off the GUI thread
    assert "does not exist" in eng.model_check.text() and "Fix:" in eng.model_check.text()
    eng.model_dir.setText(str(tiny_model_dir))
    eng.dummy.setChecked(True)
    qtbot.waitUntil(lambda: eng.model_ok is True, timeout=5000)
    # the automatic GPU memory budget is the engine's own sizing for this model (engine/sizing/memory.py)
    from voxcap.engine.model.folder import inspect_model_dir
    from voxcap.engine.sizing import memory

    fp = memory.footprint(inspect_model_dir(tiny_model_dir, True), 2, None)
    where = "GPU memory" if eng.cuda else "this computer's memory (no GPU here)"
    assert eng.kv.value() == 0 and eng.kv.specialValueText() == "Automatic"
    assert eng.kv_note.text() == eng.kv.accessibleDescription() == (  # wrapped under the box
        f"Automatic: ≈{memory.gib(fp.kv_cache_bytes)} KV cache for 2 streams, "
        f"≈{memory.gib(fp.total_bytes)} of {where} in all")
    eng.graph_mode.setCurrentIndex(eng.graph_mode.findData("FULL_AND_PIECEWISE"))
    dlg.overlay_panel.lines.setValue(3)
    dlg.overlay_panel.font_size.setValue(36)
    dlg.overlay_panel.opacity.setValue(40)
    dlg.captions_panel.mask_profanity.setChecked(True)
    dlg.buttons.accepted.emit()
    assert app.settings.engine.graph_mode == "FULL_AND_PIECEWISE"
    assert app.overlay.settings.lines == 3 and app.overlay.height() == app.overlay.fitted_height(3)
    saved, problem = load_settings()
    assert problem is None
    assert (saved.engine.graph_mode, saved.overlay.lines, saved.overlay.font_size, saved.mask_profanity,
            saved.engine.model_dir) == ("FULL_AND_PIECEWISE", 3, 36, True, str(tiny_model_dir))
    assert saved.overlay.background_opacity == 0.4
    qtbot.waitUntil(lambda: "FULL_AND_PIECEWISE" in app.window.engine_status.label.text()
                    and app.window.engine_status.state == "ready", timeout=10000)


def test_each_precision_says_what_it_would_take_on_this_gpu(monkeypatch, tiny_model_dir):
    """Where the card has room for more than one choice, Settings says what each would take
    (memory, streams) before the person picks; with one choice or no GPU it says nothing more."""
    from voxcap.app.model_check import choice_costs
    from voxcap.engine.sizing import verdict as verdict_module
    from voxcap.engine.sizing.memory import Sizing
    from voxcap.engine.sizing.precision import GpuFacts

    gib = 2**30
    monkeypatch.setattr(verdict_module, "read_gpu_facts", lambda: GpuFacts(8 * gib, int(7.5 * gib), (8, 9)))
    text = choice_costs(str(tiny_model_dir), True, Sizing())
    assert text.startswith("Each choice that fits now: bfloat16 (the model's own precision) ≈"), text
    assert "; 4-bit weights + FP8 KV cache ≈" in text, text
    assert text.count(" for 2 streams") == 5, text
    monkeypatch.setattr(verdict_module, "read_gpu_facts", lambda: None)
    assert choice_costs(str(tiny_model_dir), True, Sizing()) == ""


def test_precision_is_a_setting_with_its_cost_said(qtbot, make_app, tmp_path, monkeypatch,
                                                   tiny_model_dir):
    """Settings → Engine → Precision: each choice says what it costs; the choice is saved and
    is the app's; a bad value in the file falls back to Automatic."""
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir), dummy_weights=True)))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    eng = dlg.engine_panel
    qtbot.waitUntil(lambda: eng.model_ok is True, timeout=5000)
    assert eng.precision.currentData() == "auto"
    assert [eng.precision.itemData(i) for i in range(eng.precision.count())] == [
        "auto", "bfloat16", "fp8", "fp8_kv", "mxfp4", "mxfp4_kv"]
    assert "FP8 weights (12 GB cards)" in eng.precision_note.text()
    assert "4-bit weights (6-8 GB cards, RTX 30+) only where FP8 does not fit" in eng.precision_note.text()
    eng.precision.setCurrentIndex(eng.precision.findData("mxfp4"))
    assert eng.precision_note.text().startswith("4-bit weights: weights rounded to 4 bits (MXFP4)")
    assert "accuracy may be lower" in eng.precision_note.text()
    eng.precision.setCurrentIndex(eng.precision.findData("fp8"))
    assert "weights rounded to 8 bits" in eng.precision_note.text()
    assert "benchmarks/precision_wer.py" in eng.precision_note.text()  # not measured: said so
    assert eng.precision_note.accessibleDescription() == "Precision note"  # its name: its text
    dlg.buttons.accepted.emit()
    assert app.settings.engine.precision == "fp8"
    assert load_settings()[0].engine.precision == "fp8"
    path = settings_path()
    path.write_text(json.dumps({"model_dir": "/m", "precision": "int4"}))
    settings, problem = load_settings(path)
    assert settings.engine.precision == "auto" and "precision" in problem


def test_applied_settings_are_the_dialogs_changes_and_each_part_follows_its_own(
        qtbot, make_app, tmp_path, monkeypatch):
    """What the dialog changed is applied; what the main window changed meanwhile (the source,
    the overlay's place) stays. The overlay restyles and refits live, the masker follows its
    setting, and the engine restarts only for a setting declared to restart it."""
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    restarts, masker = [], app.assembler.masker
    app.settings_changes.subscribe(restarts.append, restarting_engine=True)
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    dlg.overlay_panel.font_size.setValue(40)
    dlg.overlay_panel.lines.setValue(3)
    app.choose_source("mic")  # the main window, while the dialog is open
    app.overlay.setGeometry(30, 40, 650, 100)
    app.save_overlay_geometry()
    dlg.apply()
    assert app.settings.source == "mic" and load_settings()[0].source == "mic"
    assert app.window_state.overlay.geometry[:2] == [30, 40]
    assert app.overlay.settings.font_size == 40 and app.overlay.height() == app.overlay.fitted_height(3)
    assert restarts == [] and app.assembler.masker is masker
    assert app.window.engine_status.state == "ready"

    dlg.captions_panel.mask_profanity.setChecked(True)
    dlg.apply()
    assert app.assembler.masker is not masker and restarts == []
    dlg.engine_panel.delay.set_value(960)
    dlg.apply()
    assert [c.restarting_engine for c in restarts] == [("engine.delay_ms",)]
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)


def _luminance(c) -> float:
    """WCAG 2's relative luminance of a QColor."""
    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def _contrast(a, b) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_a_colour_buttons_label_is_readable_on_its_colour(qtbot):
    """The button shows the colour chosen with its name on it: the name in black or white,
    whichever stands out from that colour (white on yellow could not be read), as painted."""
    from PySide6.QtGui import QColor

    from voxcap.gui.settings.overlay_page import ColorButton

    for colour in ("#ffff00", "#ffd54f", "#00ff00", "#00ffff", "#ff0000", "#0000ff", "#808080",
                   "#ffffff", "#000000"):
        button = ColorButton(colour, "Caption text colour")
        qtbot.addWidget(button)
        button.resize(200, 32)
        button.show()
        image = button.grab().toImage()
        inner = [image.pixelColor(x, y) for x in range(8, image.width() - 8, 1)
                 for y in range(6, image.height() - 6)]
        best = max(_contrast(QColor(colour), p) for p in inner)
        assert best >= 4.5, (colour, round(best, 2))  # WCAG AA for text


def test_no_note_in_settings_is_cut_off(qtbot, tiny_model_dir):
    """Each wrapped note (the precision's, the graph mode's, the delay's) gets the height its
    lines need, at the desktop's font and at a large one, and the dialog stays on the screen
    (its first page scrolls where the screen is shorter): OK and Cancel can be reached."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication, QLabel

    from voxcap.gui.settings.dialog import SettingsDialog

    qapp = QApplication.instance()
    normal = QFont(qapp.font())
    settings = AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir), dummy_weights=True))
    try:
        for scale in (1.0, 1.6):
            font = QFont(normal)
            font.setPointSizeF(normal.pointSizeF() * scale)
            qapp.setFont(font)
            dlg = SettingsDialog(settings, cuda=False)
            qtbot.addWidget(dlg)
            dlg.show()
            qtbot.waitExposed(dlg)
            qtbot.waitUntil(lambda d=dlg: d.engine_panel.model_ok is not None)  # the folder checked
            qtbot.wait(100)  # laid out for the notes it set
            notes = [n for n in dlg.findChildren(QLabel) if n.wordWrap() and n.isVisible()]
            assert dlg.engine_panel.precision_note in notes
            cut = [(n.text()[:40], n.height(), n.heightForWidth(n.width())) for n in notes
                   if n.height() < n.heightForWidth(n.width())]
            assert cut == [], (scale, cut)
            free, frame = dlg.screen().availableGeometry(), dlg.frameGeometry()
            # (the other tabs' widths at a large font are wider than this 800-pixel screen)
            assert free.top() <= frame.top() and frame.bottom() <= free.bottom(), (scale, frame)
            assert scale > 1 or free.contains(frame), (scale, free, frame)
            dlg.reject()
    finally:
        qapp.setFont(normal)


def test_ctrl_page_down_changes_tabs_from_any_control(qtbot, tiny_model_dir):
    """Ctrl+PageDown / Ctrl+PageUp (the keys every tabbed dialog takes) change Settings' tab
    whichever control has the focus: a combo box once kept them for itself, leaving a keyboard
    user on the first tab (Ctrl+Tab did work)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox

    from voxcap.gui.settings.dialog import SettingsDialog

    settings = AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir), dummy_weights=True))
    dlg = SettingsDialog(settings, cuda=False)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    first = dlg.tabs.currentWidget()
    for kind in (QComboBox, QSpinBox, QLineEdit):
        control = next(w for w in first.findChildren(kind) if w.isVisible() and w.isEnabled())
        control.setFocus()
        qtbot.waitUntil(control.hasFocus)
        before = control.currentIndex() if isinstance(control, QComboBox) else None
        qtbot.keyClick(control, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
        assert dlg.tabs.currentIndex() == 1, kind.__name__
        assert before is None or control.currentIndex() == before  # the choice left alone
        qtbot.keyClick(dlg.focusWidget(), Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
        assert dlg.tabs.currentIndex() == 0, kind.__name__
    dlg.tabs.setCurrentIndex(dlg.tabs.count() - 1)
    qtbot.keyClick(dlg.focusWidget() or dlg, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert dlg.tabs.currentIndex() == 0  # round from the last to the first, as QTabWidget does
    dlg.reject()
