"""Every place Tab stops has a name a screen reader can say: the main window (each tab, the meter
dock shown), Settings (each tab, both engines), the welcome dialog and F1's list, walked by Tab
as a keyboard user walks them; a stop whose accessible name is empty (a filler that takes the
focus) fails, named by its class and parent."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.gui.first_run import FirstRunDialog


def _tab_stops(qtbot, window: QWidget) -> list[QWidget]:
    """The widgets Tab reaches in ``window``, in order, once round."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    stops: list[QWidget] = []
    for _ in range(200):
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
        w = QApplication.focusWidget()
        assert w is not None, f"Tab left {type(window).__name__} with no focus"
        if stops and w is stops[0]:
            return stops
        if w not in stops:
            stops.append(w)
    raise AssertionError(f"Tab never came round: {stops}")


def _nameless(stops: list[QWidget], where: str) -> list[str]:
    out = []
    for w in stops:
        iface = QAccessible.queryAccessibleInterface(w)
        name = iface.text(QAccessible.Text.Name).strip() if iface is not None else ""
        if not name:
            out.append(f"{where}: {type(w).__name__} in {type(w.parentWidget()).__name__}")
    return out


def test_every_tab_stop_has_a_name(qtbot, make_app, tiny_model_dir):
    app = make_app(AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir),
                                                   dummy_weights=True)))
    w = app.window
    w.show()
    w.meter_dock.show()
    nameless = []
    for tab in range(w.tabs.count()):
        w.tabs.setCurrentIndex(tab)
        nameless += _nameless(_tab_stops(qtbot, w), f"main window, {w.tabs.tabText(tab).replace('&', '')}")

    app.open_settings()
    dlg = app.settings_control.dialog
    for engine in ("local", "remote"):
        panel = dlg.engine_panel
        panel.engine.setCurrentIndex(panel.engine.findData(engine))
        for tab in range(dlg.tabs.count()):
            dlg.tabs.setCurrentIndex(tab)
            nameless += _nameless(_tab_stops(qtbot, dlg), f"Settings ({engine}), "
                                                          f"{dlg.tabs.tabText(tab)}")
    dlg.reject()

    welcome = FirstRunDialog(gpus=[])
    qtbot.addWidget(welcome)
    welcome.show()
    welcome.folder.setText(str(tiny_model_dir))  # no weights: the self-check box shows
    qtbot.waitUntil(welcome.self_check.isVisible, timeout=5000)
    nameless += _nameless(_tab_stops(qtbot, welcome), "welcome dialog")
    welcome.reject()

    w.show_shortcuts()
    box = next(b for b in w.findChildren(QMessageBox) if b.isVisible())
    nameless += _nameless(_tab_stops(qtbot, box), "F1's list")
    box.accept()
    assert nameless == [], nameless
