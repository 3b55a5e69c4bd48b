"""The overlay's companions in the app: its state band and announcements, fed from the app (the
controller's events go to ``app.overlay_status`` and what it decides to the overlay; once a
second, how late the captions are: the newest caption lag painted in the last 3 s, or the audio
still waiting for the engine), stepping aside of the app's dialogs (``overlay_aside``), and View
→ Move or resize overlay, the keyboard's way to place it.

GUI thread only; connected to the app's event bridge and meter timer, after the app's own
handlers (so a new session has cleared the overlay before the band changes).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from ...app.overlay_status import OverlayStatus, OverlayStatusTracker
from ..settings.setting_words import for_the_app
from .aside import OverlayAside

RECENT_LAG_S = 3.0
MOVE_KEYS = "Ctrl+Shift+O"
MOVE_TEXT = "Mo&ve or resize overlay (then arrows move, Shift+arrows resize, Enter done)"


class OverlayState:
    def __init__(self, app) -> None:
        self.app = app
        self.tracker = OverlayStatusTracker()
        self._show(self.tracker.status)
        app.overlay.announce_lines = lambda: app.settings.announce_captions
        app.window.hidden_voice = app.overlay  # the app's notices, while the window is hidden
        app.bridge.events.connect(self.on_event)
        app.meter_timer.timeout.connect(self.tick)
        self.aside = OverlayAside(app.overlay, app.window,
                                  auto_placed=lambda: not app.window_state.overlay.geometry)
        self.act_move = self._move_action(app.window, app.overlay)

    @staticmethod
    def _move_action(window, overlay) -> QAction:
        """In the View menu after Reset overlay position, and among the window's shortcuts (so
        Help → Keyboard shortcuts lists it with the keys of the mode)."""
        act = QAction(MOVE_TEXT, window)
        act.setShortcut(QKeySequence(MOVE_KEYS))
        act.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        act.triggered.connect(overlay.start_keyboard_mode)
        window.addAction(act)
        for menu in window.act_reset_overlay.associatedObjects():
            if menu is not window and hasattr(menu, "insertAction"):
                following = menu.actions()
                at = following.index(window.act_reset_overlay) + 1
                menu.insertAction(following[at] if at < len(following) else None, act)
        overlay.keyboardModeEnded.connect(window.activateWindow)  # the keys go back to it
        return act

    def on_event(self, ev) -> None:
        status = self.tracker.on_event(ev)
        if status is not None:
            self._show(status)

    def asked(self, what: str) -> None:
        """F6: "pausing" / "resuming", shown before the controller gets to it."""
        status = self.tracker.on_asked(what)
        if status is not None:
            self._show(status)

    def _show(self, status: OverlayStatus) -> None:
        """An engine error's fix in the app's words (the core names settings by markers). A
        captioning state is spoken by the main window's state label while that is shown: a
        screen reader hears it once, not from both windows in the same millisecond. A status
        ``said_by_notice`` is spoken with the notice's words and fix, by the overlay while the
        main window is hidden (``MainWindow.hidden_voice``)."""
        spoken = not (status.window_says and self.app.window.isVisible())
        self.app.overlay.set_status(replace(status, text=for_the_app(status.text)), spoken)

    def lateness_s(self) -> float | None:
        recent = self.app.caption_lag.values(last_s=RECENT_LAG_S)
        history = self.app.sampler.history
        backlog_ms = history[-1].backlog_ms if history else None
        known = [v for v in (recent[-1] if recent else None,
                             backlog_ms / 1000 if backlog_ms is not None else None)
                 if v is not None]
        return max(known) if known else None

    def tick(self) -> None:
        status = self.tracker.on_lateness(self.lateness_s())
        if status is not None:
            self._show(status)
