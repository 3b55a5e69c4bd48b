"""The capture pieces that need no sound server: conversion to 16 kHz mono, gap detection against
the wall clock, the retry backoff and the health verdict."""

from __future__ import annotations

import numpy as np
import pytest

from voxcap.capture.stream import Converter
from voxcap.capture.watchdog import Backoff, GapMeter, health


def _sine(freq, rate, seconds, amp=0.5):
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _run(conv, data, block):
    out = [conv(data[i: i + block]) for i in range(0, len(data), block)]
    return np.concatenate(out + [conv.flush()])


def test_channels_are_averaged_not_channel_0():
    left = _sine(440, 16000, 1.0)
    stereo = np.stack([left, np.zeros_like(left)], axis=1)
    out = _run(Converter(16000, 2), stereo, 320)
    assert np.allclose(out, left / 2, atol=1e-6)
    opposite = np.stack([left, -left], axis=1)
    assert np.abs(_run(Converter(16000, 2), opposite, 320)).max() < 1e-6


@pytest.mark.parametrize("rate", [48000, 44100, 22050, 8000])
def test_other_rates_are_resampled_block_by_block(rate):
    x = _sine(1000, rate, 2.0)
    block = round(rate * 0.02)
    out = _run(Converter(rate, 1), x[:, None], block)
    assert abs(out.size - 32000) <= 2  # every sample accounted for, none invented
    spectrum = np.abs(np.fft.rfft(out[4000:-4000] * np.hanning(out.size - 8000)))
    peak_hz = np.argmax(spectrum) * 16000 / (out.size - 8000)
    assert abs(peak_hz - 1000) < 5
    # a real resampler: no clicks at block edges (the error against an ideal sine stays tiny)
    ideal = _sine(1000, 16000, 2.0)
    lag = int(np.argmax(np.correlate(out[8000:8400], ideal[8000:8800], "valid")))
    err = out[8000:24000] - np.roll(ideal, -lag)[8000:24000]
    assert np.abs(err).max() < 0.01


def test_aliasing_is_filtered_when_downsampling():
    x = _sine(12000, 48000, 1.0)  # above the 8 kHz Nyquist of 16 kHz audio
    out = _run(Converter(48000, 1), x[:, None], 960)
    assert np.sqrt(np.mean(out[2000:-2000] ** 2)) < 0.005  # would fold to 4 kHz at full level


def _steady(g, rng, t0, k0, k1, frames):
    """Callbacks k0..k1-1 of 20 ms blocks, each up to 4 ms early or late; returns (gaps, frames)."""
    found = []
    for k in range(k0, k1):
        frames += 960
        found.append(g.update(t0 + 0.02 * k + rng.uniform(-0.004, 0.004), frames))
    return [x for x in found if x], frames


def test_gap_meter_counts_missing_frames_once():
    g = GapMeter(48000)
    rng = np.random.default_rng(1)
    gaps, frames = _steady(g, rng, 100.0, 0, 50, 0)
    assert gaps == []
    # one second of audio never arrives: the blocks after it keep coming at the usual pace
    gaps, frames = _steady(g, rng, 101.0, 50, 150, frames)
    assert len(gaps) == 1 and abs(gaps[0] - 1.0) < 0.01
    gaps, frames = _steady(g, rng, 101.0, 150, 250, frames)  # counted once
    assert gaps == []


def test_gap_meter_a_late_callback_that_catches_up_is_no_gap():
    g = GapMeter(48000)
    rng = np.random.default_rng(2)
    gaps, frames = _steady(g, rng, 100.0, 0, 50, 0)
    # starved for 300 ms, then the 15 blocks buffered meanwhile arrive in a burst
    t = 100.0 + 0.02 * 50 + 0.3
    for i in range(16):
        frames += 960
        gaps.append(g.update(t + 0.0005 * i, frames))
    more, frames = _steady(g, rng, 100.0, 66, 150, frames)
    assert [x for x in gaps if x] == [] and more == []


def test_gap_meter_a_slow_device_clock_is_no_gap():
    g = GapMeter(48000)
    frames, period = 0, 0.02 * (1 + 100e-6)  # the device runs 100 ppm slow: 0.36 s an hour
    found = []
    for k in range(180_000):  # an hour of 20 ms blocks
        frames += 960
        found.append(g.update(k * period, frames))
    assert not any(found)


def test_gap_meter_ignores_bursts_ahead_of_the_clock():
    g = GapMeter(48000)
    assert g.update(0.0, 960) == 0.0
    assert g.update(0.001, 960 * 10) == 0.0  # start-up burst
    assert g.update(0.2, 960 * 20) == 0.0


def test_backoff_doubles_to_its_cap_and_resets():
    b = Backoff(0.1, 1.0)
    assert [round(b.next_delay(), 2) for _ in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    b.reset()
    assert b.next_delay() == 0.1


def test_health_verdicts():
    assert health(True, 10, 0.1, 2.0, 4.0) == ""
    assert health(False, 10, 0.0, 2.0, 4.0) == "stream finished"
    assert health(True, 10, 2.5, 2.0, 4.0) == "stalled"
    assert health(True, 0, 2.5, 2.0, 4.0) == ""  # first data may take longer
    assert health(True, 0, 4.5, 2.0, 4.0) == "stalled"
