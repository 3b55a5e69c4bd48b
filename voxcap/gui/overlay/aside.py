"""Nothing of voxcap's own under the overlay: while one of the app's dialogs or menus is open
(Export's file dialog, Settings, a menu, a drop-down list), the overlay steps aside to where it
covers none of them, and comes back when they close; the user's saved place is not changed.
An automatically placed overlay (never moved by the user) also keeps clear of the main window's
menus and top row of buttons; one the user put there stays.

How: an application-wide event filter sees every top-level window of the app shown, moved,
resized or hidden; dialogs and popups are the ones kept clear (tool tips and the main window are
not). Where no place on the screen is clear, the overlay is lowered below them instead.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QWidget

Rect = tuple[int, int, int, int]
GAP = 4


def _rect(r: QRect) -> Rect:
    """QRect.getRect(), typed (PySide6's stubs say it returns an object)."""
    return r.x(), r.y(), r.width(), r.height()


def _hits(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def aside(overlay: Rect, keep_clear: list[Rect], screen: Rect) -> Rect | None:
    """Where the overlay covers none of ``keep_clear`` on ``screen``, as near to where it is as
    possible (same size, same column; then the screen's other edge): ``overlay`` itself when
    nothing is covered, None when no place is clear."""
    x, y, w, h = overlay
    sx, sy, sw, sh = screen
    if not any(_hits(overlay, r) for r in keep_clear):
        return overlay
    ys = {sy, sy + sh - h}
    for r in keep_clear:
        ys |= {r[1] - h - GAP, r[1] + r[3] + GAP}
    x = min(max(x, sx), sx + sw - w)
    places = [(x, cy, w, h) for cy in ys if sy <= cy <= sy + sh - h]
    clear = [p for p in places if not any(_hits(p, r) for r in keep_clear)]
    return min(clear, key=lambda p: abs(p[1] - y)) if clear else None


class OverlayAside(QObject):
    def __init__(self, overlay, window, auto_placed=lambda: False) -> None:
        super().__init__(overlay)
        self.overlay = overlay
        self.window = window
        self.auto_placed = auto_placed  # the overlay's place is the default one, not the user's
        self.home: QRect | None = None  # the overlay's own place while it is stepped aside
        self._again = QTimer(self, singleShot=True, interval=0)  # once per burst of events
        self._again.timeout.connect(self.follow)
        app = QApplication.instance()
        assert app is not None  # the overlay is a widget: the application exists
        app.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Move,
                            QEvent.Type.Resize) and isinstance(obj, QWidget) and obj.isWindow() \
                and obj is not self.overlay and (self._kept_clear(obj) or obj is self.window):
            self._again.start()
        return False

    @staticmethod
    def _kept_clear(w: QWidget) -> bool:
        kind = w.windowType()
        return isinstance(w, QDialog) or kind in (Qt.WindowType.Popup, Qt.WindowType.Dialog,
                                                  Qt.WindowType.Sheet)

    def keep_clear(self) -> list[Rect]:
        rects = [_rect(w.frameGeometry()) for w in QApplication.topLevelWidgets()
                 if w.isVisible() and w is not self.overlay and self._kept_clear(w)]
        if self.auto_placed() and self.window.isVisible() and not self.window.isMinimized():
            rects.append(self.controls_rect())
        return rects

    def controls_rect(self) -> Rect:
        """The main window's menus and its top row (Start captioning … Settings)."""
        w = self.window
        frame = w.frameGeometry()
        row = w.start_button
        bottom = row.mapToGlobal(row.rect().bottomLeft()).y()
        return (frame.x(), frame.y(), frame.width(), bottom - frame.y() + GAP)

    def follow(self) -> None:
        o = self.overlay
        if not o.isVisible() or o.keyboard_mode:
            return
        if self.home is not None and o.geometry() != o.placed:
            self.home = None  # the user moved it meanwhile: where it is now is its place
        home = self.home or QRect(o.geometry())
        screen = _rect((o.screen() or QApplication.primaryScreen()).availableGeometry())
        place = aside(_rect(home), self.keep_clear(), screen)
        if place is None:
            o.lower()
            place = _rect(home)
        self.home = None if place == _rect(home) else home
        if place != _rect(o.geometry()):
            o.place_for_now(QRect(*place))
