"""The rollover policy's cut decision (``find_cut``), alone: no engine, no vLLM."""

from __future__ import annotations

import numpy as np
import pytest

from voxcap.engine.rollover import CutState, RolloverPolicy, find_cut
from voxcap.errors import EngineError
from voxcap.framing import SAMPLE_RATE as SR
from voxcap.framing import STEP_SAMPLES as FRAME

POLICY = RolloverPolicy(soft_s=2.0, hard_s=4.0, min_pause_s=0.32)


def speech(seconds: float, level: float = 0.1, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * SR)) * level).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SR), np.float32)


def feed(state: CutState, audio: np.ndarray, block: int = 1600, latency_high=False):
    """Feed like the rolling engine does: returns the stream sample where the cut falls."""
    for i in range(0, audio.size, block):
        chunk = audio[i:i + block]
        cut = find_cut(POLICY, state, chunk, latency_high)
        if cut is not None:
            return i + cut
        state.samples_sent += chunk.size
    return None


def test_no_cut_before_the_soft_limit_even_in_a_pause():
    audio = np.concatenate([speech(0.5), silence(1.0), speech(0.4)])
    assert feed(CutState(), audio) is None


def test_after_the_soft_limit_the_cut_falls_inside_the_first_pause():
    audio = np.concatenate([speech(2.5), silence(0.6), speech(0.5)])
    state = CutState()
    at = feed(state, audio)
    assert at is not None and state.rollover_reason == "pause"
    assert 2.5 * SR + POLICY.min_pause_s * SR - FRAME <= at <= 3.1 * SR


def test_a_short_gap_between_words_is_no_pause():
    audio = np.concatenate([speech(2.5), silence(0.16), speech(1.0)])
    assert feed(CutState(), audio) is None


def test_without_a_pause_the_cut_is_at_the_hard_limit():
    state = CutState()
    assert feed(state, speech(5.0)) == 4 * SR
    assert state.rollover_reason == "limit"


def test_high_latency_counts_as_the_soft_limit():
    state = CutState()
    at = feed(state, np.concatenate([speech(0.5), silence(0.6)]), latency_high=True)
    assert at is not None and state.rollover_reason == "latency"


def test_quiet_speaker_pause_is_relative_to_their_level():
    """A pause is quiet relative to recent speech: 10% of a quiet voice is still a pause."""
    audio = np.concatenate([speech(2.5, level=0.01), speech(0.6, level=0.0005), speech(0.3, 0.01)])
    assert feed(CutState(), audio) is not None


def test_capped_leaves_room_for_prompt_and_flush():
    p = RolloverPolicy().capped(max_model_len=1000)
    assert p.hard_s == pytest.approx((1000 - 63 - 63 - 16) * FRAME / SR)
    assert p.soft_s <= p.hard_s * 0.8
    assert RolloverPolicy().capped(max_model_len=8192).hard_s == 360.0
    with pytest.raises(EngineError):
        RolloverPolicy().capped(max_model_len=150)
