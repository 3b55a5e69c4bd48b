"""How the overlay is kept above other windows on this desktop (the path: ``voxcap.app.desktop_environment``).

``prepare_platform()`` runs before the QApplication exists: on GNOME/Wayland it makes the app an
XWayland client (``QT_QPA_PLATFORM=xcb``), where mutter honours "stay on top". The whole app and
not only the overlay: one process keeps captions, settings, click-through and geometry in one
place, and the main window loses only crisp fractional scaling (mutter scales X11 windows).
``OverlayPlacement`` then puts the overlay on the compositor's overlay layer where the path is
layer-shell, and holds the one message for the user when no path keeps it on top.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from ...app.desktop_environment import LAYER_SHELL, OFFSCREEN, WINDOW, X11, XWAYLAND, OverlayPath, detect

if TYPE_CHECKING:  # imported where used: pywayland may be missing
    from .layer_shell import LayerShellOverlay

log = logging.getLogger(__name__)


def prepare_platform(env=None) -> OverlayPath:
    """Pick the overlay's path from the session; set the Qt platform it needs (unless the user
    set one). Call before the QApplication is made."""
    env = os.environ if env is None else env
    path = detect(env)
    if path.qt_platform == "xcb" and not env.get("QT_QPA_PLATFORM"):
        env["QT_QPA_PLATFORM"] = "xcb"
    log.info("overlay path: %s (%s)", path.path, path.reason)
    return path


def path_for_running_app(path: OverlayPath | None) -> OverlayPath:
    """The path as the QApplication actually started (tests and embedders make their own app)."""
    platform = QGuiApplication.platformName()
    if path is not None and not (path.path == LAYER_SHELL and platform != "wayland") and \
            not (path.path in (X11, XWAYLAND) and platform != "xcb"):
        return path
    if platform == "xcb":
        return OverlayPath(X11, "Qt runs on X11 (xcb): the window manager keeps the overlay on top")
    if platform == "wayland":
        return detect({**os.environ, "QT_QPA_PLATFORM": "wayland"})
    return OverlayPath(OFFSCREEN, f"Qt platform {platform}: no desktop")


class OverlayPlacement(QObject):
    """Attaches the overlay to its path. ``message``: (text, fix) to show once, or None."""

    menuRequested = Signal()
    outputsChanged = Signal()  # layer-shell: outputs came or went; place the overlay again

    def __init__(self, overlay, path: OverlayPath | None = None) -> None:
        super().__init__(overlay)
        self.overlay = overlay
        self.path = path_for_running_app(path)
        self.layer: LayerShellOverlay | None = None
        self.message: tuple[str, str] | None = None
        if self.path.path == LAYER_SHELL:
            try:
                from .layer_shell import LayerShellOverlay

                layer = LayerShellOverlay(overlay)
            except Exception:  # no pywayland, a protocol error: a usable window
                log.warning("layer-shell overlay failed; a normal window instead", exc_info=True)
                layer = None
            if layer is not None and layer.available:
                self.layer = layer
                layer.menuRequested.connect(self.menuRequested)
                layer.outputsChanged.connect(self.outputsChanged)
                overlay.clickThroughChanged.connect(layer.set_click_through)
            else:
                self.path = OverlayPath(WINDOW, "layer-shell could not be used: " + self.path.reason,
                                        advice="use the compositor's 'keep above' rule for the "
                                               "window titled 'voxcap captions'")
        if self.path.path == WINDOW:
            self.message = ("The captions overlay is a normal window here: other windows can "
                            f"cover it ({self.path.reason}).", self.path.advice)
            log.warning("overlay: %s", self.path.reason)

    def close(self) -> None:
        if self.layer is not None:
            self.layer.close()
            self.layer = None
