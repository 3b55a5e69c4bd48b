"""The real app (VoxcapApp) on a real desktop session, driven line by line on stdin, for the
Wayland/X11 overlay tests: ``python -m support.overlay_app`` with VOXCAP_CONFIG_DIR set
(settings persist there, so a second run shows what a restart keeps). The engine and the sound
server are the scripted stand-ins (``gui_fakes``): what is under test is the windowing.

Commands (one a line), each answered by one JSON line on stdout:
  state           the overlay path, geometry, screen, layer-shell surface, text on screen
  caption         start captioning and feed 2 s of audio once capture runs (scripted words appear;
                  tries for 30 s: under load the controller's start can take seconds)
  feed            1 s more audio into the running capture (more words: the overlay repaints)
  fullscreen      open another window, fullscreen, and give it the focus
  click-through   toggle the overlay's click-through
  move X Y        move the overlay to global X, Y (as a drag does) and save
  quit            quit as the user does (settings saved)
"""

from __future__ import annotations

import json
import logging
import os
import sys

from PySide6.QtCore import QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication, QLabel

from support.gui_fakes import FakeAudio, scripted_factory
from voxcap import paths
from voxcap.app.controller import SessionController
from voxcap.app.settings import load_settings
from voxcap.app.window_state import load_window_state
from voxcap.gui.application import VoxcapApp
from voxcap.gui.overlay.placement import prepare_platform


class OtherWindow(QLabel):
    """Another application's window: counts the clicks it gets."""

    clicks = 0

    def mousePressEvent(self, event) -> None:
        OtherWindow.clicks += 1


def reply(**kw) -> None:
    print(json.dumps(kw), flush=True)


class OverlayDriver:
    """The app and the commands read from stdin, one method each."""

    def __init__(self, app: QApplication, vapp: VoxcapApp, audio: FakeAudio) -> None:
        self.app, self.vapp, self.audio = app, vapp, audio
        self.others: list[OtherWindow] = []  # kept: a window without a reference closes
        self.commands = {"state": self.state_cmd, "caption": self.caption, "feed": self.feed,
                         "fullscreen": self.fullscreen, "click-through": self.click_through,
                         "move": self.move, "quit": self.quit}

    def win_id(self, widget) -> int:
        return int(widget.winId()) if self.app.platformName() == "xcb" else 0

    def state(self) -> dict:
        vapp = self.vapp
        ov, layer = vapp.overlay, vapp.placement.layer
        g = ov.geometry()
        return {"path": vapp.placement.path.path, "reason": vapp.placement.path.reason,
                "platform": self.app.platformName(),
                "geometry": [g.x(), g.y(), g.width(), g.height()],
                "visible": ov.isVisible(), "text": ov.visible_text(), "paints": ov.paints,
                "click_through": ov.click_through,
                "saved": vapp.window_state.overlay.geometry,
                "saved_screen": vapp.window_state.overlay.screen,
                "layer": None if layer is None else {"mapped": layer.layer_surface is not None,
                                                     "configured": layer.configured,
                                                     "output": layer.output_name,
                                                     "frames": layer.frames,
                                                     "scale": layer.buffer_scale,
                                                     "paints": vapp.overlay.paints},
                "message": vapp.placement.message, "state": vapp.state,
                "shortcuts": vapp.shortcuts.how, "shortcuts_summary": vapp.shortcuts.summary,
                "shortcuts_bound": vapp.shortcuts.bound,
                "notice": vapp.window.notice.text(), "other_clicks": OtherWindow.clicks,
                "win_id": self.win_id(ov)}

    def read_command(self) -> None:
        line = sys.stdin.readline()
        if not line:
            self.vapp.quit()
            return
        cmd, *args = line.split()
        if cmd in self.commands:
            self.commands[cmd](*args)
        else:
            reply(error=f"unknown command {cmd}")

    def state_cmd(self) -> None:
        reply(**self.state())

    def caption(self) -> None:
        self.vapp.controller.start_captioning("system")
        audio = self.audio

        def feed(tries=[300]) -> None:  # noqa: B006 - a countdown shared by the retries
            if "Them" in audio.captures:
                audio.feed("Them", 2.0)
            elif tries[0] > 0:
                tries[0] -= 1
                QTimer.singleShot(100, feed)
        feed()
        reply(ok=True)

    def feed(self) -> None:
        self.audio.feed("Them", 1.0)
        reply(ok=True)

    def fullscreen(self) -> None:
        other = OtherWindow("another window, fullscreen, with the focus")
        other.setStyleSheet("background: #2e7d32; color: white; font-size: 32px")
        other.showFullScreen()
        other.activateWindow()
        self.others.append(other)
        reply(ok=True, win_id=self.win_id(other))

    def click_through(self) -> None:
        self.vapp.overlay.set_click_through(not self.vapp.overlay.click_through)
        reply(ok=True)

    def move(self, x: str, y: str) -> None:
        self.vapp.overlay.move(int(x), int(y))
        self.vapp.save_overlay_geometry()
        reply(ok=True)

    def quit(self) -> None:
        reply(ok=True)
        self.vapp.quit()


def main() -> int:
    if os.environ.get("VOXCAP_DEBUG"):  # the app's log on stderr, which the test then keeps
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format="%(relativeCreated)8.0f %(name)s %(levelname)s %(message)s")
    path = prepare_platform()
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    settings, _ = load_settings()
    journal = paths.config_dir() / "sessions"
    settings.engine.model_dir = settings.engine.model_dir or "/tmp/fake-model"
    audio = FakeAudio()
    vapp = VoxcapApp(settings, None, controller_factory=lambda publish: SessionController(
        publish, engine_factory=scripted_factory(), audio=audio, journal_root=journal),
        sessions_root=journal, use_tray=False,
        first_run=False, overlay_path=path, window_state=load_window_state()[0])
    driver = OverlayDriver(app, vapp, audio)
    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(driver.read_command)
    vapp.start()
    reply(started=True, **driver.state())
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
