"""Devices coming and going, and the sound server dying, mid-capture: the capture notices, says
so in one event, and captures again into the same consumer (the same caption session)."""

from __future__ import annotations

import time

from support.capture_helpers import Recorder
from support.xcorr import match

from voxcap.capture import Capture
from voxcap.events import CaptureDeviceChanged, CaptureInterrupted, CaptureRecovered

MIN_R = 0.95  # as in test_capture_speech.py


def _speech_after(rec, pulse, wav, ref, sink="vspeaker"):
    start = rec.mark()
    pulse.play(wav, sink=sink)
    rec.wait_audio(0.5, since=rec.mark())
    return match(ref, rec.audio(start))


def test_chosen_device_unplugged_and_replugged(pulse, speech_them):
    wav, ref = speech_them
    rec = Recorder()
    cap = Capture("Monitor of Virtual Speaker", rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.3)
        t_unplug = time.monotonic()
        pulse.unload_sink("vspeaker")
        lost = rec.wait_event(CaptureDeviceChanged, reason="lost")
        assert time.monotonic() - t_unplug < 2.0
        assert lost.from_device == "Monitor of Virtual Speaker"
        assert lost.to_device == "Monitor of Mic Feed"  # same kind: system audio, not the mic
        assert "until it returns" in lost.message
        # audio keeps flowing from the fallback meanwhile
        mark = rec.mark()
        rec.wait_audio(0.3, since=mark)
        pulse.load_sink("vspeaker")
        back = rec.wait_event(CaptureDeviceChanged, reason="returned")
        assert back.to_device == "Monitor of Virtual Speaker"
        m = _speech_after(rec, pulse, wav, ref)
        assert m.r >= MIN_R, m
    finally:
        stats = cap.stop()
    assert cap.generation == 1  # followed by moving the stream, not by reopening
    assert stats.dropped_blocks == 0 and stats.interruptions == 0


def test_microphone_unplugged_and_replugged_never_captures_system_audio(pulse, speech_them, speech_you):
    rec = Recorder()
    cap = Capture("mic", rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.3)
        pulse.unload_sink("virtmic")  # the only microphone
        down = rec.wait_event(CaptureInterrupted)
        assert down.reason == "device gone"
        # the server would have moved the stream to system audio: nothing of it reaches us
        mark = rec.mark()
        pulse.play(speech_them[0], sink="vspeaker")
        leaked = rec.audio(mark)
        assert leaked.size < 0.1 * 16000, f"{leaked.size / 16000:.2f} s delivered with no microphone"
        pulse.load_sink("virtmic")
        up = rec.wait_event(CaptureRecovered, timeout=10)
        assert up.device == "virtmic"
        m = _speech_after(rec, pulse, speech_you[0], speech_you[1], sink="micfeed")
        assert m.r >= MIN_R, m
    finally:
        cap.stop()


def test_system_follows_the_default_output(pulse):
    rec = Recorder()
    cap = Capture("system", rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.2)
        pulse.set_default_sink("micfeed")
        ev = rec.wait_event(CaptureDeviceChanged, reason="default changed")
        assert ev.to_device == "Monitor of Mic Feed"
        assert "default output" in ev.message
    finally:
        cap.stop()


def test_sound_server_killed_and_restarted(pulse, speech_them):
    wav, ref = speech_them
    rec = Recorder()
    cap = Capture("system", rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.3)
        before = rec.mark()
        pulse.kill()
        down = rec.wait_event(CaptureInterrupted, timeout=5)
        assert down.reason == "server gone", down
        time.sleep(1.0)  # stays down for a while: reopen attempts fail meanwhile
        assert not rec.events_of(CaptureRecovered)
        t_restart = time.monotonic()
        pulse.restart()
        up = rec.wait_event(CaptureRecovered, timeout=10)
        assert time.monotonic() - t_restart < 3.0
        assert up.device == "vspeaker.monitor" and up.outage_s >= 1.0
        m = _speech_after(rec, pulse, wav, ref)
        assert m.r >= MIN_R, m
    finally:
        stats = cap.stop()
    assert before > 0 and len(rec.blocks) > before  # one consumer, audio from both sides of it
    assert stats.interruptions == 1 and cap.generation >= 2
    assert stats.dropped_blocks == 0
