"""Qt probes for front ends that must run without Qt: ``voxcap doctor`` and the launcher's
error box. Importing this module imports PySide6 (which is what they want to find out)."""

from __future__ import annotations

import sys
from pathlib import Path

import PySide6


def xcb_plugin() -> Path:
    """Qt's X11/XWayland platform plugin (``ldd`` on it names missing system libraries)."""
    return Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"


def error_box(title: str, text: str) -> None:
    """A modal error message (raises when Qt cannot show one)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication.instance() or QApplication(sys.argv[:1])
    box = QMessageBox(QMessageBox.Icon.Critical, title, text)
    box.setTextFormat(Qt.TextFormat.PlainText)  # an error's text may quote anything
    box.setTextInteractionFlags(box.textInteractionFlags())
    box.exec()
    del app
