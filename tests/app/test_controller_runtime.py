"""The controller as the runtime of every front end: a file source, the one flush policy, the
restart policy. The scripted engine keeps these deterministic; the real engine runs the same
paths in tests/commands (transcribe, live) and tests/gui."""

from __future__ import annotations

import time

import soundfile as sf
from support.event_wait import Events
from support.event_wait import wait_for as _wait
from support.gui_fakes import FakeAudio, ScriptedEngine, scripted_factory

from voxcap.app.controller import SessionController
from voxcap.app.sources import FileAudio
from voxcap.captions.sessions import SessionStore
from voxcap.commands.bench import speech_like
from voxcap.engine.settings import InProcessSettings
from voxcap.events import (
    AppProblem,
    CaptioningState,
    EngineReady,
    EngineRestarting,
    SourceEnded,
    StreamFinished,
    TextDelta,
)


def _settings(mode="FULL_DECODE_ONLY"):
    return InProcessSettings("/tmp/model", graph_mode=mode, max_streams=2)


def _off(e):
    return isinstance(e, CaptioningState) and e.state == "off"


def test_a_file_is_one_more_source_and_its_end_ends_the_session(tmp_path):
    wav = tmp_path / "talk.wav"
    sf.write(wav, speech_like(3.0, seed=4), 16000)
    q = Events()
    ctl = SessionController(q.put, engine_factory=scripted_factory(), audio=FileAudio(wav),
                            journal_root=tmp_path / "sessions")
    ctl.start_engine(_settings())
    _wait(q, lambda e: isinstance(e, EngineReady))
    ctl.start_captioning("")
    ended, _ = _wait(q, lambda e: isinstance(e, SourceEnded))
    assert ended.source == "talk.wav" and ended.seconds == 3.0 and not ended.error
    off, seen = _wait(q, _off)
    assert "end of the audio" in off.message
    deltas = [e for e in seen if isinstance(e, TextDelta)]
    (fin,) = [e for e in seen if isinstance(e, StreamFinished)]
    assert fin.reason == "flushed" and len(deltas) == 3 * 16000 // 1280 + 1  # every step, the flush
    session = SessionStore(tmp_path / "sessions").open(off.session_id)
    assert session.info.kind == "transcribe" and session.info.title == "talk.wav"
    assert len(session.records) == len(deltas) and session.info.ended is not None
    assert ctl.shutdown().wait(10)


class HungEngine(ScriptedEngine):
    """Never finishes a closed stream (a stuck engine), until aborted."""

    def close_stream(self, stream_id: str) -> None:
        pass


def test_flush_gives_up_after_the_timeout_without_progress(tmp_path):
    q = Events()
    audio = FakeAudio()
    ctl = SessionController(q.put, engine_factory=lambda s, sink: HungEngine(s, sink),
                            audio=audio, journal_root=tmp_path, flush_timeout_s=0.5)
    ctl.start_engine(_settings())
    ctl.start_captioning("system")
    _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "on")
    audio.feed("Them", 0.5)
    t0 = time.monotonic()
    ctl.stop_captioning()
    problem, _ = _wait(q, lambda e: isinstance(e, AppProblem))
    assert "not all captioned" in problem.message and "nothing for 0 s" not in problem.message
    _, seen = _wait(q, _off)
    assert 0.5 <= time.monotonic() - t0 < 5
    assert any(isinstance(e, StreamFinished) and e.reason == "aborted" for e in seen)
    assert ctl.shutdown().wait(10)


def test_abort_gives_up_on_the_flush_at_once(tmp_path):
    q = Events()
    ctl = SessionController(q.put, engine_factory=lambda s, sink: HungEngine(s, sink),
                            audio=FakeAudio(), journal_root=tmp_path, flush_timeout_s=300)
    ctl.start_engine(_settings())
    ctl.start_captioning("system")
    _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "on")
    ctl.stop_captioning()
    _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "stopping")
    t0 = time.monotonic()
    ctl.abort()  # a second Ctrl-C
    problem, _ = _wait(q, lambda e: isinstance(e, AppProblem))
    assert "given up on request" in problem.message
    _wait(q, _off)
    assert time.monotonic() - t0 < 5
    assert ctl.shutdown().wait(10)


def test_restart_policy_starts_restarts_or_leaves_the_engine(tmp_path):
    q = Events()
    ctl = SessionController(q.put, engine_factory=scripted_factory(), audio=FakeAudio(),
                            journal_root=tmp_path)
    ctl.apply_engine_settings(_settings(), "first start")  # no engine: started
    _wait(q, lambda e: isinstance(e, EngineReady))
    n = len(ScriptedEngine.instances)
    ctl.apply_engine_settings(_settings(), "nothing changed")  # same settings: left alone
    ctl.apply_engine_settings(_settings("PIECEWISE"), "graph mode PIECEWISE")
    ev, seen = _wait(q, lambda e: isinstance(e, EngineRestarting))
    assert ev.reason == "graph mode PIECEWISE"
    _wait(q, lambda e: isinstance(e, EngineReady))
    assert len(ScriptedEngine.instances) == n + 1
    assert not any(isinstance(e, EngineRestarting) and e.reason == "nothing changed"
                   for e in q.all)
    assert ctl.shutdown().wait(10)


def test_a_file_waits_for_the_engine_without_losing_audio(tmp_path):
    """Read before the engine is ready, a file is held in full (a live source only hold_s)."""
    wav = tmp_path / "early.wav"
    sf.write(wav, speech_like(2.0, seed=5), 16000)
    q = Events()
    ctl = SessionController(q.put, engine_factory=scripted_factory(start_s=1.0),
                            audio=FileAudio(wav), journal_root=tmp_path / "s", hold_s=0.5)
    ctl.start_engine(_settings())
    ctl.start_captioning("")
    _wait(q, lambda e: isinstance(e, SourceEnded))  # all read while the engine loads
    assert ctl.held_audio_s() == 2.0
    _, seen = _wait(q, _off)
    deltas = [e for e in seen if isinstance(e, TextDelta)]
    assert len(deltas) == 2 * 16000 // 1280 + 1 and ctl.dropped_audio_s() == 0
    assert not any(isinstance(e, AppProblem) for e in seen)
    assert ctl.shutdown().wait(10)
