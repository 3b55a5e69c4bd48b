"""The delays the engines take: only those Voxtral Realtime was trained on, for this computer's
engine and for a vLLM server's alike; what Settings says of each is the model card's."""

from __future__ import annotations

import pytest

from voxcap.engine.choice import EngineChoice
from voxcap.engine.delays import (
    PRESETS,
    TRAINED_DELAYS_MS,
    delay_text,
    nearest_trained_delay,
    wer_words,
)
from voxcap.engine.remote.settings import RemoteSettings
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import ConfigError

UNTRAINED = (1280, 1600, 2000, 2320, 100, 40, 0, 2480)


def test_the_trained_delays_are_the_model_cards():
    assert TRAINED_DELAYS_MS == (80, 160, 240, 320, 400, 480, 560, 640, 720, 800, 880, 960,
                                 1040, 1120, 1200, 2400)


@pytest.mark.parametrize("delay", UNTRAINED)
def test_both_engines_refuse_an_untrained_delay(delay):
    for settings in (InProcessSettings("/m", delay_ms=delay),
                     RemoteSettings(server_url="ws://gpu-box:8000", delay_ms=delay)):
        with pytest.raises(ConfigError) as refused:
            settings.validated()
        assert refused.value.setting == "delay_ms"
        assert f"{delay} ms is not one Voxtral Realtime was trained on" in refused.value.message
        assert "80 to 1200 ms in steps of 80, or 2400" in refused.value.message
    for kind in ("local", "remote"):  # the app's settings, the same way
        choice = EngineChoice(kind=kind, model_dir="/m", server_url="ws://gpu-box:8000",
                              delay_ms=delay)
        with pytest.raises(ConfigError):
            choice.settings_for(max_streams=2)


@pytest.mark.parametrize("delay", TRAINED_DELAYS_MS)
def test_both_engines_take_every_trained_delay(delay):
    assert InProcessSettings("/m", delay_ms=delay).validated().delay_ms == delay
    assert RemoteSettings(server_url="ws://gpu-box:8000", delay_ms=delay).validated().delay_ms == delay


@pytest.mark.parametrize(("asked", "nearest"), [(100, 80), (1240, 1200), (1800, 1200), (1801, 2400),
                                                (5000, 2400), (-5, 80), (520, 480), (960, 960)])
def test_the_nearest_trained_delay(asked, nearest):
    assert nearest_trained_delay(asked) == nearest


def test_only_the_model_cards_error_rates_are_quoted():
    assert wer_words(160) == "word error rate 12.60 %"
    assert wer_words(2400) == "word error rate 6.73 %"
    assert wer_words(240) == "word error rate between 160 ms's 12.60 % and 480 ms's 8.72 %"
    assert wer_words(80) == "word error rate not on the model card"
    assert [(p.name, p.delay_ms) for p in PRESETS] == [
        ("Fast", 240), ("Balanced", 480), ("Accurate", 960), ("Most accurate", 2400)]
    assert delay_text(480) == "480 ms — Balanced (default): word error rate 8.72 %"
    assert delay_text(960) == "960 ms — Accurate: word error rate 7.70 %"
