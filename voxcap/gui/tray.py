"""The tray icon, where the desktop has a tray (none under a bare X server: the app works without)."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu, QSystemTrayIcon


def tray_available() -> bool:
    return QSystemTrayIcon.isSystemTrayAvailable()


class Tray(QSystemTrayIcon):
    """Start/stop, show overlay, click-through, show window, quit: the main window's own actions."""

    def __init__(self, icon, actions, parent=None) -> None:
        super().__init__(icon, parent)
        self.setToolTip("voxcap live captions")
        menu = QMenu()
        for action in actions:
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)
        self._menu = menu
        self.setContextMenu(menu)
