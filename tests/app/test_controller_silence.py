"""A source with no sound is said, through real captures from a real PulseAudio server (the
scripted engine takes the audio): a muted microphone while the other side of "Both" talks, and
system audio alone with nothing playing; each said once within its bound, and its return when
sound plays. The levels on the way are the controller's reading (``input_levels()``)."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest
from support.event_wait import Events
from support.event_wait import wait_for as _wait
from support.gui_fakes import scripted_factory

from voxcap.app.controller import SessionController
from voxcap.app.session.input_levels import SILENT_DBFS
from voxcap.app.sources import AudioSources
from voxcap.engine.settings import InProcessSettings
from voxcap.events import CaptioningState, CaptureDeviceChanged, EngineReady, SourceSilence

pytestmark = pytest.mark.slow
AFTER_S = 2.0  # the bound, short for a test (the app's default is 10 s)
LATE_S = 2.0  # the captures' start and the 0.25 s windows: said no later than this after its bound


def _controller(tmp_path, q):
    audio = AudioSources()
    audio.echo_cancel = "off"  # the canceller has its own tests: here the microphone as it is
    ctl = SessionController(q.put, engine_factory=scripted_factory(), audio=audio,
                            journal_root=tmp_path / "sessions")
    ctl.silence_after_s = AFTER_S
    ctl.start_engine(InProcessSettings("/tmp/model", max_streams=2))
    _wait(q, lambda e: isinstance(e, EngineReady))
    return ctl


def _on(e):
    return isinstance(e, CaptioningState) and e.state == "on"


def _silence(source: str, state: str):
    return lambda e: isinstance(e, SourceSilence) and e.source == source and e.state == state


def _levels_while(ctl, proc, seconds: float) -> list[dict]:
    seen = []
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        seen.append(ctl.input_levels())
        time.sleep(0.25)
    return seen


def test_a_muted_microphone_is_said_while_the_other_side_talks_and_its_return(pulse, speech_them,
                                                                              speech_you, tmp_path):
    pulse.pactl("set-source-mute", "virtmic", "1")
    q = Events()
    ctl = _controller(tmp_path, q)
    players = []
    try:
        ctl.start_captioning("both")
        _wait(q, _on, timeout=15)
        started = time.monotonic()
        players.append(pulse.play(speech_them[0], wait=False))
        players.append(pulse.play(speech_you[0], sink="micfeed", wait=False))  # into a muted mic
        levels = _levels_while(ctl, players[0], 1.5)
        alarm, _ = _wait(q, _silence("You", "silent"), timeout=AFTER_S + LATE_S + 3)
        took = time.monotonic() - started
        print(f"You said silent after {took:.2f} s ({alarm.silent_s} s of its audio); levels {levels}")
        assert AFTER_S <= alarm.silent_s and took <= AFTER_S + LATE_S, (took, alarm)
        assert alarm.message == f"You: no sound from the microphone for {AFTER_S:.0f} s"
        assert "muted" in alarm.fix
        assert max(r["Them"] or -90 for r in levels) > -40  # the speech is measured...
        assert max(r["You"] or -90 for r in levels) < SILENT_DBFS  # ...the muted side is not
        assert not [e for e in q.all if isinstance(e, SourceSilence) and e.source == "Them"]

        for p in players:
            p.wait(30)
        pulse.pactl("set-source-mute", "virtmic", "0")
        unmuted = time.monotonic()
        players.append(pulse.play(speech_you[0], sink="micfeed", wait=False))
        _wait(q, _silence("You", "back"), timeout=5)
        print(f"You back {time.monotonic() - unmuted:.2f} s after the unmute")
        said = [e for e in q.all if isinstance(e, SourceSilence) and e.state == "silent"]
        assert said == [alarm]  # said once
    finally:
        for p in players:
            p.kill()
        pulse.pactl("set-source-mute", "virtmic", "0", check=False)
        assert ctl.shutdown().wait(30)


def test_system_audio_alone_with_nothing_playing_is_said_after_three_times_the_bound(
        pulse, speech_them, tmp_path):
    q = Events()
    ctl = _controller(tmp_path, q)
    player = None
    try:
        ctl.start_captioning("system")
        _wait(q, _on, timeout=15)
        started = time.monotonic()
        alarm, _ = _wait(q, _silence("Them", "silent"), timeout=3 * AFTER_S + LATE_S + 3)
        took = time.monotonic() - started
        print(f"Them said silent after {took:.2f} s")
        assert 3 * AFTER_S <= alarm.silent_s and took <= 3 * AFTER_S + LATE_S, (took, alarm)
        assert alarm.message.startswith("Them: no sound from system audio for 6 s")
        assert "another output" in alarm.fix
        player = pulse.play(speech_them[0], wait=False)
        _wait(q, _silence("Them", "back"), timeout=5)
        assert ctl.input_levels()["Them"] is not None
        ctl.stop_captioning()
        _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "off", timeout=15)
        assert ctl.input_levels() == {}  # nothing captured: no levels
    finally:
        if player is not None:
            player.kill()
        assert ctl.shutdown().wait(30)


def test_an_application_playing_nothing_is_waited_for_not_said_silent(pulse, tmp_path):
    """Captioning one application that plays nothing: its capture says "waiting for PlayerA",
    and "no sound" is not said on top of it. Once it plays (silence here), its silence is said
    after the bound, counted from when it began to play."""
    import soundfile as sf

    silence = tmp_path / "silence.wav"
    sf.write(silence, np.zeros(int(16000 * (3 * AFTER_S + LATE_S + 4))), 16000)
    q = Events()
    ctl = _controller(tmp_path, q)
    player = None
    try:
        ctl.start_captioning("app:PlayerA")
        # said as its capture opens, before captioning is on
        waiting, _ = _wait(q, lambda e: isinstance(e, CaptureDeviceChanged) and e.reason == "waiting",
                           timeout=15)
        _wait(q, _on, timeout=15)
        time.sleep(3 * AFTER_S + LATE_S + 1)
        assert not [e for e in q.all if isinstance(e, SourceSilence)], waiting
        player = subprocess.Popen(["paplay", f"--server={pulse.server}", "--device=vspeaker",
                                   "--client-name=PlayerA", str(silence)], env=pulse.env())
        _wait(q, lambda e: isinstance(e, CaptureDeviceChanged) and e.reason == "playing", timeout=5)
        playing = time.monotonic()
        alarm, _ = _wait(q, _silence(waiting.source, "silent"), timeout=3 * AFTER_S + LATE_S + 3)
        took = time.monotonic() - playing
        assert 3 * AFTER_S <= alarm.silent_s and took <= 3 * AFTER_S + LATE_S, (took, alarm)
        player.wait(30)  # it ends: waiting again, and the silence said is over
        _wait(q, _silence(waiting.source, "back"), timeout=5)
    finally:
        if player is not None:
            player.kill()
        assert ctl.shutdown().wait(30)
