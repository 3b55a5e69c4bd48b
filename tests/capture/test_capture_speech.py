"""Speech played into the virtual speaker / microphone comes out of Capture intact.

Threshold r >= 0.95 for the captured audio aligned with the played file (both at 16 kHz, normalised
cross-correlation). The path is lossless apart from resampling (the server's 22.05/44.1 -> 48 kHz,
ours 48 -> 16 kHz) and 16-bit samples in the null sink: the facts file measured r = 0.9992 on it
and these tests see about 0.999. What must fail falls far below: unrelated speech gives |r| < 0.05,
and one 20 ms block lost in the middle of this sentence gives r = 0.67 (0.88 near its start; a
loss in trailing silence changes nothing, which is why the loss counters are asserted too).
"""

from __future__ import annotations

import numpy as np
from support.capture_helpers import Recorder
from support.xcorr import match, rms

from voxcap.capture import Capture
from voxcap.events import CaptureStarted

MIN_R = 0.95


def _capture_while_playing(pulse, source, wav, sink):
    rec = Recorder()
    cap = Capture(source, rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.3)
        pulse.play(wav, sink=sink)
        start = rec.mark()
        rec.wait_audio(0.5, since=start)  # the tail of the speech is through the pipeline
    finally:
        stats = cap.stop()
    return rec, stats


def _assert_lossless(stats):
    assert stats.dropped_blocks == 0
    assert stats.overflows == 0
    assert stats.gaps == 0 and stats.gap_seconds == 0.0
    assert stats.interruptions == 0


def test_system_audio_recovers_speech(pulse, speech_them):
    wav, ref = speech_them
    rec, stats = _capture_while_playing(pulse, "system", wav, "vspeaker")
    m = match(ref, rec.audio())
    assert m.r >= MIN_R, m
    assert 0.8 < m.gain < 1.2, m  # no boost, no clipping, no halving
    _assert_lossless(stats)
    started = rec.events_of(CaptureStarted)[0]
    assert started.device == "vspeaker.monitor" and started.channels == 2 and started.rate == 48000


def test_microphone_recovers_speech(pulse, speech_you):
    wav, ref = speech_you
    rec, stats = _capture_while_playing(pulse, "mic", wav, "micfeed")
    m = match(ref, rec.audio())
    assert m.r >= MIN_R, m
    assert 0.8 < m.gain < 1.2, m
    _assert_lossless(stats)
    assert rec.events_of(CaptureStarted)[0].device == "virtmic"


def test_blocks_are_small_16k_mono_float32_with_rising_capture_times(pulse, speech_them):
    rec, _ = _capture_while_playing(pulse, "system", speech_them[0], "vspeaker")
    blocks = rec.blocks
    assert len(blocks) > 50
    for b in blocks:
        assert b.samples.dtype == np.float32 and b.samples.ndim == 1
        assert 0 < b.samples.size <= 0.040 * 16000  # at most 40 ms
        assert b.source == "Them"
    times = np.array([b.captured_at for b in blocks])
    assert np.all(np.diff(times) > 0)
    # capture time + duration tracks the wall clock: 16 kHz of audio per second of time
    span = times[-1] - times[0]
    audio_s = sum(b.samples.size for b in blocks[:-1]) / 16000
    assert abs(span - audio_s) < 0.1, (span, audio_s)


def test_both_sources_at_once_each_gets_only_its_own_audio(pulse, speech_them, speech_you):
    them, you = Recorder(), Recorder()
    cap_them = Capture("system", them.on_block, them.on_event).start()
    cap_you = Capture("mic", you.on_block, you.on_event).start()
    try:
        them.wait_audio(0.3)
        you.wait_audio(0.3)
        p1 = pulse.play(speech_them[0], sink="vspeaker", wait=False)
        p2 = pulse.play(speech_you[0], sink="micfeed", wait=False)
        assert p1.wait(60) == 0 and p2.wait(60) == 0
        them.wait_audio(0.5, since=them.mark())
        you.wait_audio(0.5, since=you.mark())
    finally:
        stats = [cap_them.stop(), cap_you.stop()]
    a_them, a_you = them.audio(), you.audio()
    assert match(speech_them[1], a_them).r >= MIN_R
    assert match(speech_you[1], a_you).r >= MIN_R
    # crosstalk: the other sentence is not in there (a real match would be > 0.95)
    assert match(speech_you[1], a_them).r < 0.3
    assert match(speech_them[1], a_you).r < 0.3
    assert rms(a_them) > 0.01 and rms(a_you) > 0.01
    for st in stats:
        _assert_lossless(st)
    assert them.blocks[0].source == "Them" and you.blocks[0].source == "You"
