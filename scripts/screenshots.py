"""Screenshots of the real app under a private Xvfb, captioning real audio.

It starts Xvfb, a private PulseAudio server with a virtual speaker and microphone
(``tests/support/pulse.py``), and the app (``voxcap.gui``) with the tiny self-check model (random
weights, so the caption *text* is gibberish; everything else is the real pipeline: PulseAudio
capture of "system audio" and the microphone, the vLLM engine, the GUI). espeak-ng speech is
played into both; then it saves into ``docs/screenshots/``:

- ``main-window.png``  the main window while captioning two labelled streams, meter docked
- ``overlay.png``      the whole virtual screen (``import -window root``): the caption overlay
                       over a desktop (a drawn video call)
- ``desktop.png``      the same with the main window open
- ``settings.png``     the settings panel
- ``meter.png``        the throughput meter
- ``first-run.png``    the first-run dialog on this machine (no NVIDIA GPU)

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

Needs scripts/setup-dev.sh's packages (xvfb, xcompmgr, imagemagick, libxcb-*, pulseaudio,
espeak-ng, sox). On a loaded machine, VLLM_CPU_OMP_THREADS_BIND=1 keeps the tiny engine off a
core other vLLM processes are pinned to.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))



def make_desktop():
    """A full-screen stand-in for what a person has open under the overlay: a video call."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QLinearGradient, QPainter
    from PySide6.QtWidgets import QWidget

    class Desktop(QWidget):
        def paintEvent(self, event):
            p = QPainter(self)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            g = QLinearGradient(0, 0, self.width(), self.height())
            g.setColorAt(0, QColor("#1b2a49"))
            g.setColorAt(1, QColor("#3b6978"))
            p.fillRect(self.rect(), g)
            call = QRectF(self.width() * 0.45, 40, self.width() * 0.52, self.height() * 0.8)
            p.setBrush(QColor("#101418"))
            p.setPen(Qt.PenStyle.NoPen)
            p.drawRoundedRect(call, 12, 12)
            p.setPen(QColor("#cfd8dc"))
            f = QFont("DejaVu Sans", 13)
            p.setFont(f)
            p.drawText(call.adjusted(16, 10, 0, 0), "Quarterly review — video call")
            tiles = [("#5c6bc0", "AM", "Alex M."), ("#26a69a", "JS", "Jordan S. (you)")]
            w = (call.width() - 48) / 2
            for i, (color, initials, name) in enumerate(tiles):
                tile = QRectF(call.left() + 16 + i * (w + 16), call.top() + 44, w, call.height() - 120)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor("#263238"))
                p.drawRoundedRect(tile, 10, 10)
                c = tile.center()
                p.setBrush(QColor(color))
                p.drawEllipse(c, 60, 60)
                p.setPen(QColor("#ffffff"))
                p.setFont(QFont("DejaVu Sans", 30, QFont.Weight.Bold))
                p.drawText(QRectF(c.x() - 60, c.y() - 60, 120, 120), Qt.AlignmentFlag.AlignCenter,
                           initials)
                p.setFont(f)
                p.drawText(tile.adjusted(12, 0, 0, -10), Qt.AlignmentFlag.AlignBottom, name)
            p.end()

    return Desktop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from support.pulse import PulseServer
    from support.xvfb import Xvfb, prepare_desktop_run, pump

    tmp, model, them, you = prepare_desktop_run("voxcap-shots-")
    with Xvfb(args.width, args.height) as x, PulseServer(tmp / "pulse") as pulse:
        from PySide6.QtWidgets import QApplication

        from voxcap.app.settings import AppSettings
        from voxcap.engine.choice import EngineChoice
        from voxcap.gui.application import VoxcapApp
        from voxcap.gui.first_run import FirstRunDialog

        if not x.start_compositor():
            print("screenshots: no xcompmgr: translucent parts of the overlay show black",
                  file=sys.stderr)
        app = QApplication(["voxcap"])
        desktop = make_desktop()
        desktop.setGeometry(0, 0, args.width, args.height)
        desktop.show()
        settings = AppSettings(engine=EngineChoice(model_dir=str(model), dummy_weights=True,
                                                   enforce_eager=True, max_model_len=2048), source="both")
        settings.overlay.lines = 3
        settings.overlay.geometry = [int(args.width * 0.14), int(args.height * 0.70),
                                     int(args.width * 0.72), 0]
        vapp = VoxcapApp(settings, None, persist=False, use_tray=False, first_run=False)
        settings.overlay.geometry[3] = vapp.overlay.fitted_height()
        vapp.start()
        vapp.window.setGeometry(10, 10, 1480, 600)
        vapp.overlay.raise_()
        t0 = time.monotonic()
        print("screenshots: waiting for the engine (tiny model, CPU)…", flush=True)
        if not pump(app, 900, lambda: vapp.window.engine_status.state in ("ready", "failed")):
            print("screenshots: the engine did not start", file=sys.stderr)
            return 1
        print(f"screenshots: engine {vapp.window.engine_status.state} after "
              f"{time.monotonic() - t0:.0f} s", flush=True)
        vapp.toggle_captioning()
        pump(app, 60, lambda: vapp.state == "on")
        players = [pulse.play(them, "vspeaker", wait=False)]
        pump(app, 2.5)
        players.append(pulse.play(you, "micfeed", wait=False))
        pump(app, 60, lambda: all(p.poll() is not None for p in players))
        pump(app, 4)  # the last words and a few meter samples
        words = len(vapp.window.history.toPlainText().split())
        print(f"screenshots: {words} words captioned; caption lag samples "
              f"{len(vapp.caption_lag)}", flush=True)
        vapp.overlay.raise_()
        pump(app, 0.5)
        x.screenshot(out / "desktop.png")
        vapp.window.hide()  # the overlay alone over the video call
        pump(app, 0.5)
        x.screenshot(out / "overlay.png")
        vapp.window.show()
        pump(app, 0.5)
        vapp.window.grab().save(str(out / "main-window.png"))
        vapp.window.meter_dock.grab().save(str(out / "meter.png"))
        vapp.open_settings()
        dlg = vapp.settings_control.dialog
        pump(app, 1.5)
        dlg.grab().save(str(out / "settings.png"))
        dlg.reject()
        first = FirstRunDialog()
        first.show()
        pump(app, 1.0)
        first.grab().save(str(out / "first-run.png"))
        first.reject()
        vapp.quit()
        pump(app, 120, lambda: vapp.controller.closed.is_set())
    for name in ("main-window", "overlay", "desktop", "settings", "meter", "first-run"):
        print(f"screenshots: {out / (name + '.png')}")
    sys.stdout.flush()
    os._exit(0)  # PySide6 can crash in interpreter finalisation; all is closed by now


if __name__ == "__main__":
    sys.exit(main())
