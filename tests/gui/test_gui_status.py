"""The status never contradicts itself: a notice goes once its cause is gone, the meter says which
engine it is waiting for during a restart, "keeping up" is judged from backlog and lag, and a
long engine stage visibly counts up."""

from __future__ import annotations

from support.gui_fakes import scripted_factory

from voxcap.app.meter import MeterReading, pace
from voxcap.events import EngineProgress


def _reading(**kw) -> MeterReading:
    base = dict(at=0.0, engine_ready=True, requested_mode="FULL", resolved_mode="FULL",
                full_share=1.0, steps=100, tokens_per_s=12.5, step_p50_ms=38.0, step_p95_ms=45.0,
                headroom=2.1, backlog_ms=80.0, lag_p50_s=0.9, lag_p95_s=1.2, paint_p50_ms=5.0,
                paint_p95_ms=9.0, dropped_s=0.0, held_s=0.0, streams=1, gpu=None)
    base.update(kw)
    return MeterReading(**base)


def test_pace_is_judged_from_backlog_and_lag_not_step_time_alone():
    assert pace(_reading()) == "keeping up"
    # the case from the issue: fast steps beside 32 s of backlog and 154 s of caption lag
    assert pace(_reading(backlog_ms=32_000.0, lag_p95_s=154.0)) == \
        "catching up: backlog 32 s, captions 154 s late"
    assert pace(_reading(headroom=0.7, backlog_ms=5_000.0)).startswith("FALLING BEHIND")
    assert pace(_reading(headroom=0.7)) == "FALLING BEHIND"
    assert pace(_reading(headroom=None)) == ""


def test_held_audio_notice_goes_once_the_engine_takes_the_audio(qtbot, make_app, fake_audio):
    app = make_app(engine_factory=scripted_factory(start_s=2.5))
    app.controller.hold_s = 0.3
    app.toggle_captioning()  # while the engine is still starting: audio is held
    qtbot.waitUntil(lambda: app.state == "waiting", timeout=5000)
    assert "waiting for the engine" in app.window.notice.text()
    fake_audio.feed("Them", 1.0)  # more than hold_s: the oldest is dropped, and said so
    qtbot.waitUntil(lambda: "oldest held audio is being dropped" in app.window.notice.text(),
                    timeout=5000)
    qtbot.waitUntil(lambda: app.state == "on", timeout=10000)
    qtbot.waitUntil(lambda: app.window.notice.text() == "", timeout=5000)


def test_capture_notices_go_with_the_capture(qtbot, make_app):
    app = make_app()
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    qtbot.waitUntil(lambda: "capturing" in app.window.notice.text(), timeout=3000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=5000)
    # no "Them: capturing" once nothing captures: the capture's totals, as the terminal says them
    assert app.window.notice.text() == "Them: stopped"


def test_sound_server_notice_goes_when_it_is_back(qtbot, make_app):
    from voxcap.events import DevicesChanged

    app = make_app()
    qtbot.waitUntil(lambda: app.window.source.count() > 3)  # the watcher's first report
    app.bridge.post(DevicesChanged((), False))  # as the device watcher reports it
    qtbot.waitUntil(lambda: "sound server is not running" in app.window.notice.text())
    app.bridge.post(DevicesChanged((), True))
    qtbot.waitUntil(lambda: app.window.notice.text() == "")


def test_meter_says_restarting_to_the_new_mode(qtbot, make_app):
    app = make_app(engine_factory=scripted_factory(start_s=3.0))  # long enough to be seen
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=15000)
    app.window.act_meter.setChecked(True)
    graph = app.window.meter.values["graph"]
    qtbot.waitUntil(lambda: graph.text() == "FULL_DECODE_ONLY", timeout=3000)
    new = app.settings.copy()
    new.engine.graph_mode = "PIECEWISE"
    app.settings_control.apply(new)
    qtbot.waitUntil(lambda: graph.text() == "restarting → PIECEWISE", timeout=3000)
    qtbot.waitUntil(lambda: graph.text() == "PIECEWISE", timeout=10000)


def test_export_while_stopping_waits_for_the_last_words(qtbot, make_app, fake_audio, tmp_path,
                                                        monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    out = tmp_path / "while-stopping.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    app = make_app(engine_factory=scripted_factory(flush_s=1.5))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=5000)
    fake_audio.feed("Them", 1.0)
    qtbot.waitUntil(lambda: "scripted" in app.window.history.toPlainText(), timeout=5000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "stopping", timeout=5000)
    app.exports.export_current()
    assert app.window.notice.text() == "Export waits for the last words to be flushed…"
    assert not out.exists()
    qtbot.waitUntil(out.exists, timeout=10000)
    assert app.state == "off"
    assert "hello there this is a scripted caption" in app.window.history.toPlainText()
    # with the last word, which arrived while stopping
    assert out.read_text().split("] ", 1)[1].split() == "hello there this is a scripted caption".split()
    assert app.window.notice.text() == f"Exported to {out}"


def test_a_long_stage_counts_up_and_says_what_to_expect(qtbot):
    from voxcap.gui.main.engine_status import EngineStatus

    status = EngineStatus()
    qtbot.addWidget(status)
    status.expected_s = 95.0
    status.progress(EngineProgress("compiling", "", 12.0))
    first = status.label.text()
    assert first == "Engine: compiling… 0 s (starting for 12 s; the last start took 95 s)"
    qtbot.waitUntil(lambda: status.label.text() != first, timeout=2500)  # no new event: alive
    assert status.label.text().startswith("Engine: compiling… 1 s (starting for 13 s")


def test_a_stage_with_a_note_shows_it_and_says_it_once(qtbot, monkeypatch):
    """The first start on an RTX 50 card spends minutes capturing graphs (the driver compiles FA2):
    the line says why, and a screen reader hears it once, not at each record of that stage."""
    import voxcap.gui.main.engine_status as es
    from voxcap.engine.vllm_adapter.env import FIRST_JIT_NOTE

    spoken = []
    monkeypatch.setattr(es, "announce", lambda widget, text, assertive=False: spoken.append(text))
    status = es.EngineStatus()
    qtbot.addWidget(status)
    status.progress(EngineProgress("compiling", "", 40.0))
    assert FIRST_JIT_NOTE not in status.label.text()
    for t in (60.0, 61.0):
        status.progress(EngineProgress("capturing graphs", "Capturing CUDA graphs", t, FIRST_JIT_NOTE))
    assert status.label.text().startswith("Engine: capturing graphs… 0 s")
    assert status.label.text().endswith(FIRST_JIT_NOTE)
    assert spoken == [FIRST_JIT_NOTE]
    status.progress(EngineProgress("allocating cache", "", 300.0))
    assert FIRST_JIT_NOTE not in status.label.text()  # the stage it explained is over


def test_chart_scale_is_never_a_tiny_number():
    from voxcap.gui.main.chart import scale_top

    assert scale_top([]) == 1.0
    assert scale_top([0.0, 0.0]) == 1.0  # was "max 1e-09"
    assert scale_top([0.0], budget=80.0) == 100.0
    assert scale_top([3.2, 47.0]) == 50.0


def test_repeating_notices_are_not_announced_each_time(qtbot, make_app, monkeypatch):
    import voxcap.gui.main.window as mw

    spoken = []
    monkeypatch.setattr(mw, "announce", lambda widget, text, assertive=False: spoken.append(text))
    app = make_app()
    w = app.window
    for total in (0.2, 0.4, 0.6):  # audio lost, again and again
        w.show_notice(f"Them: {total:.1f} s of audio lost so far", cause="CaptureLoss")
    assert w.notice.text() == "Them: 0.6 s of audio lost so far"  # shown: the latest
    assert spoken == ["Them: 0.2 s of audio lost so far"]  # spoken: once
    w.show_notice("Export failed: disk full", cause="CaptureLoss", assertive=True)
    assert spoken[-1] == "Export failed: disk full"  # errors always


def test_f5_after_an_engine_error_starts_the_engine_and_captioning_again(qtbot, make_app):
    """The issue's case: "Cannot connect", then F5 did nothing. Now F5 (or Retry) starts the
    engine again, and F5 starts captioning once it is ready (the audio meanwhile held)."""
    from support.gui_fakes import ScriptedEngine

    made = []

    def factory(settings, on_event):  # the first start fails, the next ones work
        made.append(ScriptedEngine(settings, on_event,
                                   fail_start="" if made else "the server is not there"))
        return made[-1]

    app = make_app(engine_factory=factory)
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "failed", timeout=10000)
    assert w.engine_status.retry.isVisibleTo(w)
    w.act_start.trigger()  # F5
    qtbot.waitUntil(lambda: app.state == "on", timeout=10000)
    assert len(made) == 2 and w.engine_status.state == "ready"
    assert not w.engine_status.retry.isVisibleTo(w)


def test_captions_from_a_server_show_what_the_server_path_has(qtbot, make_app):
    """The issue's remote mode showed "Graph mode remote", "Precision n/a", "GPU memory: n/a",
    "Engine ready … in 0 s". With a server (EngineReady.server), the meter shows the server,
    the round trip, lag and backlog, and hides what only the server knows; the status line
    says where the captions come from."""
    from dataclasses import replace

    from voxcap.events import EngineReady

    app = make_app()
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10000)
    app.tick()
    rows = w.meter.form

    def shown(key):
        return rows.isRowVisible(w.meter.values[key])
    assert shown("graph") and shown("gpu_mem") and not shown("server")  # this computer's
    ready = EngineReady("remote", "remote", (), 0.04, "ws://gpu-box:8000", 480, 4096, 2,
                        server="voxtral at ws://gpu-box:8000")
    app.controller.engine.ready_info = ready  # the engine now: one on a server
    app.on_event(ready)
    app.tick()
    for key in ("graph", "precision", "full", "headroom", "gpu_mem", "gpu_load"):
        assert not shown(key), key
    assert shown("server") and w.meter.values["server"].text() == "voxtral at ws://gpu-box:8000"
    assert rows.labelForField(w.meter.values["step"]).text() == "Round trip p50 / p95:"
    assert w.meter.values["step"].accessibleDescription() == "Round trip p50 / p95"
    assert w.meter.step_chart.budget is None  # no 80 ms step budget for a round trip
    status = w.engine_status.label.accessibleName()
    assert status == ("Captions from the vLLM server: voxtral at ws://gpu-box:8000 (connected in "
                      "0.0 s). Press Start captioning (F5). Delay 480 ms."), status
    app.controller.engine.ready_info = replace(ready, server="")  # back to this computer
    app.tick()
    assert shown("graph") and not shown("server") and w.meter.step_chart.budget == 80.0
