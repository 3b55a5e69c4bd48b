"""A pair ("both:APP") whose one half cannot start goes on with the other, on PulseAudio and on
PipeWire (real servers, real captures; the scripted engine keeps what each stream receives, so
the audio that reaches it is checked against what was played).
"""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest
from support.event_wait import Events
from support.event_wait import wait_for as _wait
from support.gui_fakes import ScriptedEngine
from support.xcorr import load_16k, match

from voxcap.app.controller import SessionController
from voxcap.app.sources import AudioSources
from voxcap.engine.settings import InProcessSettings
from voxcap.events import AppProblem, CaptioningState, EngineReady, StreamOpened

pytestmark = pytest.mark.slow


class RecordingEngine(ScriptedEngine):
    """The scripted engine, keeping the audio each stream label receives."""

    received: dict[str, list] = {}

    def _push(self, sid, chunk) -> None:
        st = self._streams.get(sid)
        if st is not None:
            RecordingEngine.received.setdefault(st["label"], []).append(chunk)
        super()._push(sid, chunk)


def _audio(label: str) -> np.ndarray:
    chunks = RecordingEngine.received.get(label, [])
    return np.concatenate(chunks) if chunks else np.zeros(0, np.float32)


def _controller(tmp_path, q):
    RecordingEngine.received = {}
    audio = AudioSources()
    audio.echo_cancel = "off"  # the canceller has its own tests (tests/capture/test_echo_cancel.py)
    ctl = SessionController(q.put, engine_factory=lambda s, sink: RecordingEngine(s, sink), audio=audio,
                            journal_root=tmp_path / "sessions")
    ctl.start_engine(InProcessSettings("/tmp/model", max_streams=2))
    _wait(q, lambda e: isinstance(e, EngineReady))
    return ctl


def _on(e):
    return isinstance(e, CaptioningState) and e.state == "on"


def _problems(q) -> list[AppProblem]:
    return [e for e in q.all if isinstance(e, AppProblem)]


def test_no_microphone_leaves_the_app_half_captioning(sound_server, speech_them, tmp_path):
    # The app's stream starts 0.7 s before its speech, as a call's or a video's does. The first
    # tens of ms of a new stream play before its recording is attached (app_stream.py), so the
    # reference starts 0.5 s in: all of the speech, none of what cannot be recorded.
    clip = tmp_path / "them-padded.wav"
    subprocess.run(["sox", str(speech_them[0]), str(clip), "pad", "0.7", "0"], check=True, timeout=60)
    reference = load_16k(clip)[8000:]
    sound_server.unload_sink("virtmic")  # the only input: now there is no microphone
    q = Events()
    ctl = _controller(tmp_path, q)
    try:
        ctl.start_captioning("both:PlayerA")
        state, _ = _wait(q, _on, timeout=15)
        assert state.sources == ("Them",)
        player = subprocess.Popen(["paplay", f"--server={sound_server.server}", "--device=vspeaker",
                                   "--client-name=PlayerA", str(clip)], env=sound_server.env())
        player.wait(30)
        time.sleep(0.8)
        (problem,) = _problems(q)  # exactly one notice, for the half that failed
        assert problem.message.startswith("You: There is no microphone"), problem.message
        assert 'goes on with "Them" only' in problem.message
        assert "connect or enable a microphone" in problem.fix
        assert [e.label for e in q.all if isinstance(e, StreamOpened)] == ["Them"]
        m = match(reference, _audio("Them"))
        assert m.r >= 0.9, m
    finally:
        assert ctl.shutdown().wait(30)


def test_an_app_that_cannot_be_recorded_leaves_the_microphone_captioning(sound_server, speech_you,
                                                                         tmp_path, monkeypatch):
    q = Events()
    ctl = _controller(tmp_path, q)
    try:
        path = os.environ["PATH"]
        monkeypatch.setenv("PATH", str(tmp_path))  # no `parec`: the app half cannot start
        ctl.start_captioning("both:PlayerA")
        state, _ = _wait(q, _on, timeout=15)
        monkeypatch.setenv("PATH", path)
        assert state.sources == ("You",)
        sound_server.play(speech_you[0], sink="micfeed")
        time.sleep(0.8)
        (problem,) = _problems(q)
        assert problem.message.startswith("Them: Cannot record an application's sound"), problem.message
        assert 'goes on with "You" only' in problem.message and "pulseaudio-utils" in problem.fix
        m = match(speech_you[1], _audio("You"))
        assert m.r >= 0.9, m
    finally:
        assert ctl.shutdown().wait(30)


def test_both_halves_failing_stop_with_a_notice_for_each(sound_server, tmp_path, monkeypatch):
    sound_server.unload_sink("virtmic")
    q = Events()
    ctl = _controller(tmp_path, q)
    try:
        monkeypatch.setenv("PATH", str(tmp_path))
        ctl.start_captioning("both:PlayerA")
        state, _ = _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "off", timeout=15)
        assert state.session_id == ""  # no empty session is left in the history
        problems = sorted(p.message for p in _problems(q))
        assert len(problems) == 2, problems
        assert problems[0].startswith("Them: Cannot record an application's sound")
        assert problems[1].startswith("You: There is no microphone")
        assert not any("goes on" in p for p in problems)
        assert not [e for e in q.all if isinstance(e, StreamOpened)]
    finally:
        assert ctl.shutdown().wait(30)
