"""Input levels and the rule for a silent source (app/session/input_levels.py), fed blocks as the
captures deliver them; the same through real PulseAudio captures: tests/app/test_controller_silence.py."""

from __future__ import annotations

import numpy as np

from voxcap.app.session.input_levels import InputLevels
from voxcap.events import CaptureDeviceChanged, SourceSilence

BLOCK = 320  # 20 ms


def _feed(levels: InputLevels, label: str, seconds: float, rms: float) -> None:
    rng = np.random.default_rng(7)
    for _ in range(round(seconds / 0.02)):
        block = rng.standard_normal(BLOCK).astype(np.float32) * rms if rms else np.zeros(BLOCK, np.float32)
        levels.feed(label, block)


def _both(after_s=2.0):
    said: list[SourceSilence] = []
    levels = InputLevels(said.append, after_s)
    levels.begin("Them", "system", "Monitor of Virtual Speaker")
    levels.begin("You", "mic", "Virtual Microphone")
    return levels, said


def test_levels_are_the_last_quarter_second_in_dbfs():
    levels, _ = _both()
    assert levels.levels() == {"Them": None, "You": None}  # no audio yet
    _feed(levels, "Them", 0.5, 0.1)
    _feed(levels, "You", 0.5, 0.0)
    now = levels.levels()
    assert -21 < now["Them"] < -19 and now["You"] == -90.0  # digital silence: the floor
    levels.end()
    assert levels.levels() == {}


def test_a_muted_side_of_both_is_said_once_after_its_bound_and_its_return_quietly():
    levels, said = _both(after_s=2.0)
    for _ in range(8):  # 4 s: the other side talks, this one is muted
        _feed(levels, "Them", 0.5, 0.1)
        _feed(levels, "You", 0.5, 0.0)
    (alarm,) = said
    assert alarm.source == "You" and alarm.silent and 2.0 <= alarm.silent_s < 2.5
    assert alarm.message == "You: no sound from the microphone for 2 s"
    assert "muted" in alarm.fix
    _feed(levels, "You", 0.5, 0.05)
    assert [e.state for e in said] == ["silent", "back"] and said[1].source == "You"
    _feed(levels, "You", 2.5, 0.0)  # silent again: said again
    assert [e.state for e in said] == ["silent", "back", "silent"]


def test_a_source_alone_or_both_silent_waits_three_times_as_long():
    said: list[SourceSilence] = []
    levels = InputLevels(said.append, 2.0)
    levels.begin("Them", "system", "Monitor of Virtual Speaker")
    _feed(levels, "Them", 5.7, 0.0)
    assert said == []
    _feed(levels, "Them", 0.7, 0.0)
    (alarm,) = said
    assert alarm.message == "Them: no sound from system audio for 6 s"
    assert "another output" in alarm.fix

    levels, said = _both(after_s=2.0)
    for _ in range(10):
        _feed(levels, "Them", 0.5, 0.0)
        _feed(levels, "You", 0.5, 0.0)
    assert said == []  # 5 s of both silent: not yet
    for _ in range(4):
        _feed(levels, "Them", 0.5, 0.0)
        _feed(levels, "You", 0.5, 0.0)
    assert sorted(e.source for e in said) == ["Them", "You"]


def test_quiet_room_noise_is_sound_and_a_pause_starts_the_count_again():
    levels, said = _both(after_s=2.0)
    for _ in range(8):
        _feed(levels, "Them", 0.5, 0.1)
        _feed(levels, "You", 0.5, 10 ** (-55 / 20))  # a live microphone's room noise
    assert said == []
    _feed(levels, "You", 1.5, 0.0)
    levels.end()  # paused
    levels.begin("You", "mic", "Virtual Microphone")
    levels.begin("Them", "system", "Monitor of Virtual Speaker")
    _feed(levels, "Them", 1.0, 0.1)
    _feed(levels, "You", 1.0, 0.0)
    assert said == []  # 1.5 s before the pause and 1 s after are not 2 s


def test_blocks_of_a_source_not_begun_are_ignored():
    levels, said = _both()
    levels.feed("talk.wav", np.zeros(16000, np.float32))
    assert "talk.wav" not in levels.levels() and said == []


def _app_says(levels: InputLevels, reason: str) -> None:
    """The application capture's news, as capture/app_stream.py gives it."""
    message = {"waiting": "Zoom: waiting for Zoom: it plays nothing now; captions resume when it plays",
               "playing": "Zoom: capturing 'Meeting' (only this application's sound)"}[reason]
    levels.capture_said(CaptureDeviceChanged("Zoom", "", "", reason, message))


def test_an_application_waiting_to_play_is_not_said_silent():
    """Its capture says "waiting for Zoom" (before its first block): that says it better than
    "no sound". Once it plays, its silence counts from then."""
    said: list[SourceSilence] = []
    levels = InputLevels(said.append, 2.0)
    _app_says(levels, "waiting")
    levels.begin("Zoom", "app", "Zoom (application)")
    _feed(levels, "Zoom", 10.0, 0.0)  # over three times the bound: silence delivered while it waits
    assert said == []
    _app_says(levels, "playing")  # it plays, silence
    _feed(levels, "Zoom", 5.5, 0.0)
    assert said == []  # counted from the end of the wait
    _feed(levels, "Zoom", 1.0, 0.0)
    assert [(e.source, e.state) for e in said] == [("Zoom", "silent")]
    _app_says(levels, "waiting")  # it stopped: the wait says it now
    (back,) = said[1:]
    assert (back.state, back.message) == ("back", "Zoom: Zoom (application) plays nothing now")
    _feed(levels, "Zoom", 10.0, 0.0)
    assert len(said) == 2
