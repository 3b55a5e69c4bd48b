"""The real app (windows, overlay, meter, controller) on the scripted engine and fake audio, in
its own process under an X server, steered by lines on stdin, so another process can read it
through AT-SPI the way a screen reader does (``tests/gui/test_gui_atspi.py``).

    python tests/support/atspi_app.py        # DISPLAY, DBUS_SESSION_BUS_ADDRESS set by the test

Commands (one a line; each answered "done CMD" on stdout once handled):
    caption        start captioning ("both") and feed 3 s of audio to each source
    stop           stop captioning
    pause, resume  pause captioning, resume it
    close-settings close the settings dialog (Cancel)
    key NAME [shift]  press a key (Right, Up, Return...) in the window that has the focus
    overlay-geometry  answer "overlay X Y W H"
    fail           restart the engine; the new one fails to start ("the GPU fell off the bus")
    problem        ask to start captioning (refused while the engine has failed: a notice)
    settings       open the settings dialog
    first-run PATH open the first-run dialog with PATH typed as the model folder
    first-run-download URL DIR   the first-run dialog on a machine with a GPU, downloading from
                   the (fake) Hub at URL into DIR, the engine's preparation stood in for
    prep-done      that preparation ends
    share PORT     switch sharing on (this computer only, on PORT), as Settings → Apply does
    cancel-first-run  cancel it (Escape)
    watch STATE    the caption watchdog's news of the "Them" stream (missing, fresh_session,
                   still_missing, back), published as the controller publishes it
    hide           hide the main window (to the tray: the overlay alone on screen)
    silent         "Them" talks and "You" is silent for 4 s (the no-sound bound set to 3 s)
    sound          "You" has sound again (0.5 s)
    translate-to LANG  choose the translation target, as Settings → Apply does
    quit           quit the app (as Ctrl+Q does)
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog

from support.app_process import caption_then, qt_app, run_steered, voxcap_app
from support.gui_fakes import FakeAudio, ScriptedEngine
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice

FAIL = {"message": ""}
WATCH = {  # what the watchdog says (app/session/caption_watchdog.py), its default N and M
    "missing": (8.0, "Them: speech, but no captions for 8 s"),
    "fresh_session": (15.0, "Them: speech, but no captions for 15 s — starting a fresh caption "
                      "session"),
    "still_missing": (30.0, "Them: still no captions after a fresh session (30 s of speech "
                      "without captions)"),
    "back": (0.0, "Them: captions are back"),
}


def _watch(app, state: str) -> None:
    from voxcap.events import CaptionWatch

    sid = next((s for s, label in app.labels.items() if label == "Them"), "s-them")
    speech_s, message = WATCH[state]
    app.hub.publish(CaptionWatch(sid, "Them", state, speech_s, message))


def _close_dialogs(app, _arg) -> None:
    for dlg in QApplication.topLevelWidgets():
        if isinstance(dlg, QDialog) and dlg.isVisible():
            dlg.reject()


def _key(app, arg: str) -> None:
    name, _, mod = arg.partition(" ")
    target = QApplication.focusWidget() or QApplication.activeWindow() or app.overlay
    QTest.keyClick(target, getattr(Qt.Key, f"Key_{name}"),
                   Qt.KeyboardModifier.ShiftModifier if mod == "shift"
                   else Qt.KeyboardModifier.NoModifier)


OVERLAY_WALK = {  # the overlay's walk (tests/gui/test_gui_overlay_walk.py)
    "pause": lambda app, _arg: app.controller.pause_captioning(),
    "resume": lambda app, _arg: app.controller.resume_captioning(),
    "close-settings": _close_dialogs,
    "key": _key,
    "overlay-geometry": lambda app, _arg: print("overlay", *app.overlay.geometry().getRect(),
                                                flush=True),
}


def _translate_to(app, target: str) -> None:
    new = app.settings.copy()
    new.translation.translate_to = target
    app.settings_control.apply(new)


SIMPLE = {**OVERLAY_WALK, "watch": _watch, "hide": lambda app, _arg: app.window.hide(),
          "translate-to": _translate_to}


def _silent(app, audio) -> None:
    app.controller.silence_after_s = 3.0
    audio.captures["Them"].feed(4.0)
    audio.captures["You"].feed(4.0, level=0.0)


WITH_AUDIO = {"silent": _silent, "sound": lambda _app, audio: audio.feed("You", 0.5)}


class HeldPreparation:
    """The engine's preparation, ended by the "prep-done" command (the real one: its own tests)."""

    last: HeldPreparation | None = None

    def __init__(self, model_dir, settings, on_done):
        self.on_done, self.running = on_done, False
        HeldPreparation.last = self

    def start(self):
        self.running = True
        return self

    def finish(self):
        self.running = False
        threading.Thread(target=self.on_done, args=("done", "engine prepared")).start()

    def cancel(self):
        self.running = False


def main() -> int:
    qapp = qt_app()
    audio = FakeAudio()

    def factory(settings, on_event):
        return ScriptedEngine(settings, on_event, start_s=1.5, fail_start=FAIL["message"])

    app = voxcap_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"), source="both"),
                     factory, audio)

    def handle(line: str) -> None:
        cmd, _, arg = line.partition(" ")
        if cmd == "caption":
            caption_then(app, lambda: [audio.feed(label, 3.0) for label in list(audio.captures)],
                         wait_s=10)
        elif cmd == "stop":
            app.toggle_captioning()
        elif cmd in SIMPLE:
            SIMPLE[cmd](app, arg)
        elif cmd in WITH_AUDIO:
            WITH_AUDIO[cmd](app, audio)
        elif cmd == "fail":
            FAIL["message"] = "the GPU fell off the bus"
            app.controller.restart_engine(app.settings.engine_settings(), "test")
        elif cmd == "problem":
            app.controller.start_captioning("both")
        elif cmd == "settings":
            app.open_settings()
        elif cmd == "first-run":
            app.settings_control.open_first_run()
            app.settings_control.first_run_dialog.opt_folder.setChecked(True)
            app.settings_control.first_run_dialog.folder.setText(arg)
        elif cmd == "first-run-download":
            from voxcap.app.download import ModelDownload
            from voxcap.gpu import GpuReading
            from voxcap.gui.first_run import FirstRunDialog

            url, target = arg.split(" ", 1)
            dlg = FirstRunDialog(
                app.window, gpus=[GpuReading(0, "NVIDIA GeForce RTX 4090", 2 * 2**30, 24 * 2**30, 3)],
                downloader=lambda repo, tgt, on_progress: ModelDownload(
                    repo, tgt, endpoint=url, on_progress=on_progress),
                preparer=HeldPreparation)
            app.settings_control.first_run_dialog = dlg
            dlg.target.setText(target)
            dlg.open()
            dlg.start_download()
        elif cmd == "share":
            app.settings.share.enabled, app.settings.share.port = True, int(arg)
            app.sharing.apply()
        elif cmd == "prep-done":
            HeldPreparation.last.finish()
        elif cmd == "cancel-first-run":
            app.settings_control.first_run_dialog.reject()

    return run_steered(qapp, app, handle)


if __name__ == "__main__":
    sys.exit(main())
