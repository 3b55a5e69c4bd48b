"""The GUI thread keeps serving its event loop while the real tiny engine starts behind the app
(vLLM imported, its engine core started): a misdrawn window for the whole start would mean a
GUI thread held for seconds. Measured with a 20 ms QTimer: each gap between its ticks is the
event loop's latency. Measured under Xvfb on the 2-core machine: 36 s start, largest gap
0.67 s (while the window first showed), 99th percentile 44 ms."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer

from voxcap.app.controller import default_engine_factory
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1200)]
# a start on a loaded machine may hold the thread a second or two (2.23 s once in CI, the other
# worker starting its own engine on the 2 cores); the misdrawn window this guards was 30 s
LATENCY_LIMIT_S = 5.0


def test_event_loop_latency_stays_small_while_the_engine_starts(qtbot, make_app, tiny_model_dir):
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now
    timer = QTimer(interval=20)
    timer.timeout.connect(tick)
    settings = AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir), dummy_weights=True,
                                               enforce_eager=True, max_model_len=2048))
    app = make_app(settings, engine_factory=default_engine_factory())
    timer.start()
    last[0] = time.monotonic()
    status = app.window.engine_status
    qtbot.waitUntil(lambda: status.state in ("ready", "failed"), timeout=900_000)
    timer.stop()
    assert status.state == "ready", status.label.text()
    gaps.sort()
    assert len(gaps) > 50
    assert gaps[-1] < LATENCY_LIMIT_S, f"the GUI thread was held {gaps[-1]:.2f} s"
    assert gaps[int(len(gaps) * 0.99)] < 0.5, gaps[-10:]
