"""The Qt-free session controller with the scripted engine and fake audio."""

from __future__ import annotations

from support.event_wait import Events
from support.event_wait import wait_for as _wait
from support.gui_fakes import FakeAudio, ScriptedEngine, scripted_factory

from voxcap.app.controller import SessionController
from voxcap.captions.sessions import SessionStore
from voxcap.engine.settings import InProcessSettings
from voxcap.events import (
    AppProblem,
    CaptioningState,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    StreamOpened,
    TextDelta,
)


def _settings(mode="FULL_DECODE_ONLY"):
    return InProcessSettings("/tmp/model", graph_mode=mode, max_streams=2)


def _state(name):
    return lambda e: isinstance(e, CaptioningState) and e.state == name


def test_captioning_before_ready_holds_audio_then_restart_keeps_session(tmp_path):
    q = Events()
    audio = FakeAudio()
    # 3 s: Start must come before ready. With 0.3 s, the suite's first test in a fresh clone
    # (modules imported and byte-compiled on the way) saw the engine ready first: no "waiting"
    ctl = SessionController(q.put, engine_factory=scripted_factory(start_s=3.0), audio=audio,
                            journal_root=tmp_path)
    ctl.start_engine(_settings())
    ctl.start_captioning("both")
    ev, _ = _wait(q, _state("waiting"))
    assert ev.sources == ("Them", "You")
    audio.feed("Them", 1.0)  # said while the engine loads: held, not lost
    assert ctl.held_audio_s() > 0.9
    _wait(q, lambda e: isinstance(e, TextDelta) and e.index == 11)
    if not any(_state("on")(e) for e in q.all):
        _wait(q, _state("on"))
    seen = list(q.all)
    opened = [e for e in seen if isinstance(e, StreamOpened)]
    assert ctl.held_audio_s() == 0
    session_id = ctl.session_id

    ctl.restart_engine(_settings("PIECEWISE"), "graph mode PIECEWISE")
    _wait(q, lambda e: isinstance(e, EngineRestarting))
    _wait(q, _state("restarting"))
    audio.feed("You", 0.5)  # held during the restart
    ev, seen = _wait(q, lambda e: isinstance(e, EngineReady))
    assert ev.resolved_graph_mode == "PIECEWISE"
    ev, seen = _wait(q, lambda e: isinstance(e, StreamOpened) and e.label == "You")
    ev, seen = _wait(q, lambda e: isinstance(e, TextDelta) and e.index == 5
                     and e.stream_id == seen[-1].stream_id)
    assert ctl.session_id == session_id  # one session across the restart
    assert ScriptedEngine.instances[-2].shutdown_called

    ctl.stop_captioning()
    _wait(q, _state("off"))
    assert ctl.shutdown().wait(10)  # the journal's writer thread has written everything
    session = SessionStore(tmp_path).open(session_id)
    assert len(session.labels) == 4  # two streams before and two after the restart
    assert set(session.labels.values()) == {"Them", "You"}
    assert session.info.settings["graph_mode"] == "PIECEWISE"
    assert session.info.ended is not None
    per = {}
    for r in session.records:
        per[r.stream_id] = per.get(r.stream_id, 0) + 1
    assert per[opened[0].stream_id] == 13 and per[ev.stream_id] == 7, per  # 12 + 6 and flushes
    assert opened


def test_bad_model_and_bad_source_are_reported(tmp_path):
    q = Events()
    ctl = SessionController(q.put, engine_factory=scripted_factory(), audio=FakeAudio(),
                            journal_root=tmp_path)
    ctl.start_engine(InProcessSettings("/missing"))
    ev, _ = _wait(q, lambda e: isinstance(e, EngineFailed))
    assert "does not exist" in ev.message and ev.fix
    ctl.start_engine(_settings())
    _wait(q, lambda e: isinstance(e, EngineReady))
    ctl.start_captioning("no such device")
    ev, _ = _wait(q, lambda e: isinstance(e, AppProblem))
    assert "no such device" in ev.message
    _wait(q, _state("off"))
    assert ctl.shutdown().wait(10)


def test_engine_failure_stops_captioning(tmp_path):
    q = Events()
    audio = FakeAudio()
    ctl = SessionController(q.put, engine_factory=scripted_factory(fail_start="CUDA out of memory",
                                                                     start_s=3.0),
                            audio=audio, journal_root=tmp_path)
    ctl.start_engine(_settings())
    ctl.start_captioning("system")
    _wait(q, _state("waiting"))
    ev, _ = _wait(q, _state("off"))
    assert "CUDA out of memory" in ev.message
    assert audio.captures["Them"].stopped
    ctl.start_captioning("system")  # refused at once, with the engine's reason and fix
    ev, _ = _wait(q, lambda e: isinstance(e, AppProblem))
    assert "engine is not running" in ev.message and "CUDA out of memory" in ev.message
    assert ev.fix == "a fix"
    assert ctl.shutdown().wait(10)


def test_a_remote_engine_waiting_for_its_server_is_replaced_at_once(tmp_path):
    """The GUI's remote engine waits for a server that is not there (retrying); a new address
    in Settings replaces it at once, not after the 600 s an in-process start is given to
    settle."""
    import time

    from support.vllm_server import free_port

    from voxcap.app.controller import default_engine_factory
    from voxcap.engine.remote.settings import RemoteSettings

    def waiting(port):
        return RemoteSettings(f"ws://127.0.0.1:{port}", "m", start_retry_s=None)

    q = Events()
    ctl = SessionController(q.put, engine_factory=default_engine_factory(), audio=FakeAudio(),
                            journal_root=tmp_path)
    try:
        first, second = free_port(), free_port()
        ctl.start_engine(waiting(first))
        _wait(q, lambda e: isinstance(e, EngineProgress) and "retrying in" in e.note, 20)
        t0 = time.monotonic()
        ctl.apply_engine_settings(waiting(second), "server address")
        _wait(q, lambda e: isinstance(e, EngineProgress) and str(second) in e.note, 20)
        assert time.monotonic() - t0 < 10, "the waiting engine held the restart up"
    finally:
        assert ctl.shutdown(engine_wait_s=5).wait(30)
