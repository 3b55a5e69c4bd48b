"""The real app on the real engine (LocalEngine through build_engine, as ``voxcap gui`` makes
it) and fake audio, in its own process, steered by lines on stdin; it leaves as ``voxcap gui``
does (``run_gui``: the event loop, then out at once, without the interpreter's finalisation).
Used by tests/gui/test_gui_real_engine.py to quit during a real engine start.

    python tests/support/real_engine_app.py MODEL_DIR   # QT_QPA_PLATFORM, VOXCAP_DATA_DIR set

Commands (each answered with one JSON line on stdout):
    status       {"engine": the status line's state, "app": captioning state, "history": text,
                  "deltas": texts of every TextDelta the engine gave, "stages": engine stages}
                 (each engine stage is also written to stderr as "engine stage N:STAGE")
    caption S    start captioning and feed S seconds of speech-like audio to "Them" once on
    restart [S]  switch the graph mode (the controller restarts the engine); S: hold the new
                 engine's start S seconds longer in its core
    quit         quit the app (as Ctrl+Q does)
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.app_process import qt_app, steer_by_stdin, voxcap_app
from support.gui_fakes import FakeAudio
from voxcap.app.controller import default_engine_factory
from voxcap.app.settings import AppSettings
from voxcap.commands.bench import speech_like
from voxcap.engine.choice import EngineChoice
from voxcap.events import EngineProgress, TextDelta


def main(model_dir: str) -> int:
    qapp = qt_app()
    from voxcap.gui.application import leave_at_once

    audio = FakeAudio()
    deltas: list[str] = []
    stages: list[str] = []  # "<engine number>:<stage>"
    real = default_engine_factory()
    made = [0]

    def factory(settings, on_event):
        made[0] += 1
        n = made[0]

        def sink(ev):  # what the engine gave, recorded on its way to the controller
            if isinstance(ev, TextDelta):
                deltas.append(ev.text)
            elif isinstance(ev, EngineProgress):
                stages.append(f"{n}:{ev.stage}")
                print(f"engine stage {n}:{ev.stage}", file=sys.stderr, flush=True)  # to the end
            on_event(ev)
        return real(settings, sink)

    settings = AppSettings(engine=EngineChoice(model_dir=model_dir, enforce_eager=True, max_model_len=2048,
                                               graph_mode="FULL_DECODE_ONLY"), source="system")
    app = voxcap_app(settings, factory, audio)

    def handle(line: str) -> None:
        cmd, _, arg = line.partition(" ")
        if cmd == "caption":
            app.toggle_captioning()

            def feed() -> None:
                deadline = time.monotonic() + 60
                while app.state != "on" and time.monotonic() < deadline:
                    time.sleep(0.05)
                audio.captures["Them"].feed_samples(speech_like(float(arg), seed=3))
            threading.Thread(target=feed, daemon=True).start()
        elif cmd == "restart":
            if arg:  # hold the new engine's start in its core for ARG seconds (see below)
                _hold_engine_core_start(float(arg))
            new = app.settings.copy()
            new.engine.graph_mode = "PIECEWISE"  # changes nothing without CUDA: the delay restarts
            new.engine.delay_ms = 960
            app.settings_control.apply(new)
        elif cmd == "quit":
            app.quit()
        print(json.dumps({"cmd": cmd, "engine": app.window.engine_status.state, "app": app.state,
                          "history": app.window.history.toPlainText(), "deltas": list(deltas),
                          "stages": list(stages)}), flush=True)

    commands = steer_by_stdin(handle)  # noqa: F841 - kept while the app runs
    app.start()
    code = qapp.exec()
    leave_at_once(code)  # as run_gui leaves
    return code


def _hold_engine_core_start(seconds: float) -> None:
    """Make the next engine's start take ``seconds`` longer, inside its engine core (forked from
    this process, so it inherits the change): vLLM's KV-cache set-up waits first. The tiny model
    starts in about 2 s once vLLM is imported, less than quit's wait for the engine; a test of
    quitting during a start needs the start to outlast it."""
    from vllm.v1.engine.core import EngineCore

    original = EngineCore._initialize_kv_caches

    def held(self, *args, **kwargs):
        time.sleep(seconds)
        return original(self, *args, **kwargs)

    EngineCore._initialize_kv_caches = held


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
