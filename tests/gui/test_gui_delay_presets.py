"""Settings → Engine → Delay: the presets with the model card's error rate and the lag each
adds, only delays the model was trained on, and what the row shows is what is saved."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout

from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.engine.delays import TRAINED_DELAYS_MS


def _panel(qtbot, delay_ms: int = 480):
    from voxcap.gui.settings.engine_page import EnginePanel

    panel = EnginePanel(AppSettings(engine=EngineChoice(delay_ms=delay_ms)))
    qtbot.addWidget(panel)
    panel.show()
    return panel


def _field(panel):
    """The delay row's control that takes the keys (the list; before it, a number box)."""
    return panel.delay.focusProxy() or panel.delay


def _shown(widget) -> str:
    return widget.currentText() if hasattr(widget, "currentText") else widget.text()


def _saved(panel) -> int:
    s = AppSettings()
    panel.result_into(s)
    return s.engine.delay_ms


def test_the_presets_come_first_with_their_error_rate_and_lag(qtbot):
    panel = _panel(qtbot, 960)
    box = _field(panel)
    texts = [box.itemText(i) for i in range(4)]
    assert texts == ["240 ms — Fast: word error rate between 160 ms's 12.60 % and 480 ms's 8.72 %",
                     "480 ms — Balanced (default): word error rate 8.72 %",
                     "960 ms — Accurate: word error rate 7.70 %",
                     "2400 ms — Most accurate: word error rate 6.73 %"]
    assert box.currentText() == texts[2] and _saved(panel) == 960
    assert "Captions come 0.96 s after the words" in panel.delay.note.text()
    box.setCurrentIndex(3)
    assert "2.4 s after the words" in panel.delay.note.text() and _saved(panel) == 2400
    # only the delays the model was trained on, each once
    offered = [box.itemData(i) for i in range(box.count()) if box.itemData(i) is not None]
    assert sorted(offered) == list(TRAINED_DELAYS_MS)


def test_the_row_is_named_for_screen_readers_and_reached_by_its_mnemonic(qtbot):
    panel = _panel(qtbot)
    box = _field(panel)
    assert box.accessibleName() == "Transcription delay"
    assert box.accessibleDescription().startswith("Captions come 0.48 s after the words")
    assert panel.delay.note.accessibleDescription() == "Delay note"  # its name: its text
    assert box.focusPolicy() & Qt.FocusPolicy.TabFocus
    label = panel.form.itemAt(panel.form.getWidgetPosition(panel.delay)[0],
                              QFormLayout.ItemRole.LabelRole).widget()
    assert label.text() == "&Delay:"
    assert label.buddy() in (box, panel.delay) and panel.delay.focusProxy() is box


def test_what_the_row_shows_is_what_is_saved(qtbot):
    """Typing 100 once showed "100 ms" while 80 was used and saved."""
    for typed in ("100", "1600", "960", "2"):
        panel = _panel(qtbot)
        field = _field(panel)
        field.setFocus()
        qtbot.keyClicks(field, typed)
        saved = _saved(panel)
        assert saved in TRAINED_DELAYS_MS, typed
        assert _shown(field).replace(" ", "").startswith(f"{saved}ms"), (typed, _shown(field))
    # typing a trained delay picks it (the keyboard's way to a value)
    for typed in ("960", "2400", "80", "1200"):
        panel = _panel(qtbot)
        _field(panel).setFocus()
        qtbot.keyClicks(_field(panel), typed)
        assert _saved(panel) == int(typed), typed
