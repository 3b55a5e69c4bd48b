"""Ctrl+PageDown / Ctrl+PageUp change a window's tabs from any of its controls.

QTabWidget takes these keys only when the focused control lets them through to it, and only
from inside its pages: a combo box keeps them for itself, and the main window's source picker
sits above its tabs. A window-wide shortcut reaches the tabs from everywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QTabWidget, QWidget


def page_keys(tabs: QTabWidget, window: QWidget) -> None:
    """Ctrl+PageDown the next tab of ``tabs``, Ctrl+PageUp the one before (round, as QTabWidget),
    while ``window`` is active."""
    for key, step, what in ((Qt.Key.Key_PageDown, 1, "Next tab"), (Qt.Key.Key_PageUp, -1, "Previous tab")):
        shortcut = QShortcut(QKeySequence(Qt.KeyboardModifier.ControlModifier | key), window,
                             lambda step=step: tabs.setCurrentIndex((tabs.currentIndex() + step)
                                                                     % tabs.count()))
        shortcut.setWhatsThis(what)  # Help → Keyboard shortcuts lists it (gui/main/shortcut_list.py)
