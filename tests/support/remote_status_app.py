"""The real app on the real remote engine (``voxcap.engine.remote``), its server address given
on the command line, in its own process under an X server, steered by lines on stdin: what a
person sees while the vLLM server is down, comes up, or answers wrongly
(``tests/gui/test_gui_engine_status_paint.py``).

    python tests/support/remote_status_app.py ws://127.0.0.1:PORT

Commands (one a line; each answered "done CMD" on stdout once handled):
    grab PATH   save what the engine status label renders now (``QWidget.grab``) to PATH and
                print "rect X Y W H": where it is on the screen, and "window X Y W H": the
                main window's frame
    caption     start captioning (system audio) and feed it 3 s of audio
    quit        quit the app (as Ctrl+Q does)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")

from support.app_process import caption_then, qt_app, run_steered
from support.gui_fakes import FakeAudio
from voxcap.app.controller import SessionController, default_engine_factory
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice


def main() -> int:
    qapp = qt_app()
    from voxcap.gui.application import VoxcapApp

    root = Path(os.environ["VOXCAP_DATA_DIR"]) / "sessions"
    audio = FakeAudio()
    app = VoxcapApp(AppSettings(engine=EngineChoice(kind="remote", server_url=sys.argv[1])),
                    controller_factory=lambda publish: SessionController(
                        publish, engine_factory=default_engine_factory(), audio=audio,
                        journal_root=root),
                    sessions_root=root, persist=False, use_tray=False, first_run=False)
    label = app.window.engine_status.label

    def handle(line: str) -> None:
        cmd, _, arg = line.partition(" ")
        if cmd == "grab":
            label.grab().save(arg)
            at = label.mapToGlobal(label.rect().topLeft())
            print(f"rect {at.x()} {at.y()} {label.width()} {label.height()}", flush=True)
            frame = app.window.frameGeometry()
            print(f"window {frame.x()} {frame.y()} {frame.width()} {frame.height()}", flush=True)
        elif cmd == "caption":
            caption_then(app, lambda: [audio.feed(name, 3.0) for name in list(audio.captures)])

    return run_steered(qapp, app, handle)


if __name__ == "__main__":
    sys.exit(main())
