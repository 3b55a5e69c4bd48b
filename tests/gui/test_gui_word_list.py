"""Settings → Word list: terms added, edited and removed from the keyboard, said to screen
readers, saved as glossary.txt on Apply, and the app's captions (history and overlay) spell them
right from then on."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit
from support import gui_fakes

from voxcap.app.glossary_file import glossary_path, read_terms
from voxcap.app.settings import AppSettings
from voxcap.gui.settings.dialog import SettingsDialog
from voxcap.gui.settings.word_list_page import WordListPanel

SHOTS = Path(os.environ["VOXCAP_SHOTS"]) if os.environ.get("VOXCAP_SHOTS") else None


def _type_and_enter(qtbot, panel: WordListPanel, text: str) -> None:
    panel.entry.setFocus()
    QTest.keyClicks(panel.entry, text)
    QTest.keyClick(panel.entry, Qt.Key.Key_Return)


def test_terms_are_added_edited_and_removed_from_the_keyboard(qtbot):
    panel = WordListPanel(AppSettings())
    qtbot.addWidget(panel)
    panel.show()
    assert panel.terms() == [] and not panel.add_button.isEnabled()
    _type_and_enter(qtbot, panel, "Dr.  Okonkwo ")
    _type_and_enter(qtbot, panel, "Kubernetis")
    _type_and_enter(qtbot, panel, "kubernetis")  # the same term again: refused, said
    assert panel.terms() == ["Dr. Okonkwo", "Kubernetis"]
    assert panel.status.text() == "kubernetis is already in the list."
    assert panel.entry.text() == "kubernetis"  # kept, to be fixed

    panel.list.setFocus()
    panel.list.setCurrentRow(1)
    QTest.keyClick(panel.list, Qt.Key.Key_F2)  # edit in place
    qtbot.waitUntil(lambda: panel.list.state() == panel.list.State.EditingState, timeout=2000)
    editor = panel.list.viewport().findChild(QLineEdit)  # the item's editor
    editor.selectAll()
    QTest.keyClicks(editor, "Kubernetes")
    QTest.keyClick(editor, Qt.Key.Key_Return)  # committed from Qt's event loop
    qtbot.waitUntil(lambda: panel.terms() == ["Dr. Okonkwo", "Kubernetes"], timeout=2000)
    assert panel.status.text() == "Changed to Kubernetes."

    panel.list.setFocus()
    panel.list.setCurrentRow(0)
    QTest.keyClick(panel.list, Qt.Key.Key_Delete)
    assert panel.terms() == ["Kubernetes"]
    assert panel.status.text() == "Removed Dr. Okonkwo. 1 term."
    assert panel.list.accessibleName() == "Word list"
    assert panel.entry.accessibleName() == "New name or term"


def test_apply_saves_the_list_and_the_captions_spell_the_names(qtbot, make_app, fake_audio,
                                                               monkeypatch, tmp_path):
    monkeypatch.setattr(gui_fakes, "SCRIPT", ("we", "run", "Kubernetis", "with", "Wen", "Yi."))
    app = make_app()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.open_settings()
    dialog: SettingsDialog = app.settings_control.dialog
    dialog.tabs.setCurrentWidget(dialog.word_list)
    for term in ("Kubernetes", "Wenyi", "Nguyen Thi Minh", "Bar Mitzvah", "Dr. Okonkwo"):
        _type_and_enter(qtbot, dialog.word_list, term)
    shots = SHOTS or tmp_path  # VOXCAP_SHOTS=DIR keeps it (looked at: the tab, 5 terms, Wenyi chosen)
    shots.mkdir(parents=True, exist_ok=True)
    dialog.word_list.list.setCurrentRow(1)
    qtbot.wait(50)
    assert dialog.grab().save(str(shots / "settings-word-list.png"))
    assert not glossary_path().exists()  # nothing saved before Apply
    dialog.apply()
    assert read_terms() == ["Kubernetes", "Wenyi", "Nguyen Thi Minh", "Bar Mitzvah", "Dr. Okonkwo"]
    assert glossary_path().read_text(encoding="utf-8").startswith("# voxcap word list")
    dialog.reject()

    app.window.act_start.trigger()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 1.2)
    qtbot.waitUntil(lambda: "Wenyi." in app.window.history.toPlainText(), timeout=5000)
    history = app.window.history.toPlainText()
    assert "we run Kubernetes with Wenyi." in history and "Kubernetis" not in history
    assert any("Kubernetes" in row for row in app.overlay.visible_text())
