"""Pause and resume under the real controller: real captures from a real PulseAudio server and
the session's real engine (the tiny vLLM model on the CPU build, lent through BorrowedEngine).

Pause keeps the session (its id, journal and captions so far), records it in the journal and
stops capturing (the sound server has no recording stream of voxcap's while paused); resume
captures again into the same session; Stop ends it."""

from __future__ import annotations

import time

import pytest
from support.borrowed_engine import borrowed_factory
from support.event_wait import Events
from support.event_wait import wait_for as _wait

from voxcap.app.controller import SessionController
from voxcap.app.sources import AudioSources
from voxcap.captions.sessions import SessionStore
from voxcap.events import (
    AppProblem,
    Captioning,
    CaptioningState,
    StreamFinished,
    StreamOpened,
    TextDelta,
)

pytestmark = pytest.mark.slow


def _state(name):
    return lambda e: isinstance(e, CaptioningState) and e.state == name


def _recording_streams(pulse) -> list[str]:
    """The sound server's recording streams of clients (a module's own, such as the virtual
    microphone's remap, have no client: "-")."""
    lines = pulse.pactl("list", "short", "source-outputs").splitlines()
    return [ln for ln in lines if ln.strip() and ln.split("\t")[2] != "-"]


def test_pause_keeps_the_session_and_captures_nothing_until_resumed(pulse, speech_them, engine,
                                                                    engine_hub, tmp_path):
    q = Events()
    ctl = SessionController(q.put, engine_factory=borrowed_factory(engine, engine_hub),
                            audio=AudioSources(), journal_root=tmp_path)
    try:
        ctl.start_engine(engine.settings)
        ctl.start_captioning("system")
        on, seen = _wait(q, _state("on"), timeout=20)  # its stream opened just before
        (first,) = [e for e in seen if isinstance(e, StreamOpened)]
        pulse.play(speech_them[0])
        _wait(q, lambda e: isinstance(e, TextDelta) and e.stream_id == first.stream_id
              and e.text.strip(), timeout=30)
        assert _recording_streams(pulse)

        ctl.pause_captioning()
        paused, seen = _wait(q, _state(Captioning.PAUSED), timeout=60)
        assert paused.session_id == on.session_id and paused.sources == ("Them",)
        assert any(isinstance(e, StreamFinished) and e.stream_id == first.stream_id
                   and e.reason == "flushed" for e in seen)  # its last words came before
        before = ctl.journal_session()
        assert before.session_id == on.session_id and before.records
        deadline = time.monotonic() + 5
        while _recording_streams(pulse) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _recording_streams(pulse) == []  # nothing is captured while paused
        count = len(q.all)
        pulse.play(speech_them[0])  # said while paused: not captioned
        time.sleep(1.0)
        while not q.empty():
            q.all.append(q.get())
        late = q.all[count:]
        assert not [e for e in late if isinstance(e, (TextDelta, StreamOpened))], late
        assert ctl.state == Captioning.PAUSED

        ctl.pause_captioning()  # twice: nothing more
        ctl.resume_captioning()
        resumed, seen = _wait(q, _state("on"), timeout=20)
        assert resumed.session_id == on.session_id
        second = [e for e in seen if isinstance(e, StreamOpened)][-1]
        assert second.label == "Them" and second.stream_id != first.stream_id
        pulse.play(speech_them[0])
        _wait(q, lambda e: isinstance(e, TextDelta) and e.stream_id == second.stream_id
              and e.text.strip(), timeout=30)

        ctl.stop_captioning()
        _wait(q, _state("off"), timeout=60)
        assert not [e for e in q.all if isinstance(e, AppProblem)]
    finally:
        assert ctl.shutdown().wait(30)

    (info,) = SessionStore(tmp_path).list()  # one session across the pause
    session = SessionStore(tmp_path).open(info.session_id)
    assert set(session.labels) == {first.stream_id, second.stream_id}
    assert [p.resumed for p in session.pauses] == [False, True]
    pause_s = session.pauses[1].wall - session.pauses[0].wall
    assert pause_s > 1.0 and info.paused_s == pytest.approx(pause_s, abs=0.01)
    assert info.state == "finished"
    assert info.length_s == pytest.approx(info.ended - info.created - pause_s, abs=0.01)
    records, labels, _ = session.timeline()  # one speaker, one timeline: the pause is not in it
    assert list(labels.values()) == ["Them"]


def test_a_file_cannot_be_paused(tmp_path, engine, engine_hub):
    import soundfile as sf

    from voxcap.app.sources import FileAudio
    from voxcap.commands.bench import speech_like

    wav = tmp_path / "talk.wav"
    sf.write(wav, speech_like(4.0, seed=3), 16000)
    q = Events()
    ctl = SessionController(q.put, engine_factory=borrowed_factory(engine, engine_hub),
                            audio=FileAudio(wav, realtime=True), journal_root=tmp_path)
    try:
        ctl.start_engine(engine.settings)
        ctl.start_captioning("")
        _wait(q, _state("on"), timeout=20)
        ctl.pause_captioning()
        problem, _ = _wait(q, lambda e: isinstance(e, AppProblem))
        assert problem.message == "A file cannot be paused." and problem.fix
        _wait(q, _state("off"), timeout=60)  # it ran to its end
    finally:
        assert ctl.shutdown().wait(30)
