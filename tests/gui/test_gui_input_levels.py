"""Sound that is not arriving, as the window and the overlay show it (offscreen Qt, the scripted
engine, real captures from a real PulseAudio server): a level bar per source, named with its
level; a muted microphone said in the overlay's band and the window's notice, with its fix, and
gone when sound returns; a sound-server outage in the overlay too, not only in the window."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from voxcap.app.settings import AppSettings
from voxcap.app.sources import AudioSources
from voxcap.engine.choice import EngineChoice

pytestmark = pytest.mark.slow
SHOTS = os.environ.get("VOXCAP_SHOTS")


@pytest.fixture
def fake_audio(pulse):
    """Here the real sound server's sources (the name is the one make_app takes)."""
    return AudioSources()


def _settings(source: str) -> AppSettings:
    return AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"), source=source,
                       echo_cancel="off", no_sound_after_s=3.0)


def _bar_name(app, label: str) -> str:
    return _bar_name_of(app.window.levels, label)


def test_levels_reach_the_bars_and_a_muted_microphone_is_said_until_it_sounds(
        qtbot, make_app, pulse, speech_them, speech_you):
    pulse.pactl("set-source-mute", "virtmic", "1")
    app = make_app(_settings("both"))
    players = []
    try:
        assert not app.window.levels.isVisible()  # nothing captured: no bars
        qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
        app.toggle_captioning()
        qtbot.waitUntil(lambda: app.state == "on", timeout=15000)
        players.append(pulse.play(speech_them[0], wait=False))
        qtbot.waitUntil(lambda: (app.window.levels.level_of("Them") or (-60, ""))[0] > -40,
                        timeout=5000)
        value, text = app.window.levels.level_of("Them")
        assert text == f"{value} dB"
        assert re.fullmatch(r"Them input level, -\d+ dB", _bar_name(app, "Them")), _bar_name(app, "Them")
        assert app.window.levels.isVisible()
        assert app.window.levels.level_of("You") == (-60, "silent")
        assert _bar_name(app, "You") == "You input level, silent"

        qtbot.waitUntil(lambda: "You: no sound" in app.overlay.status.text, timeout=8000)
        assert app.overlay.status.text == "You: no sound for 3 s — microphone muted?"
        assert app.window.notice.text() == ("You: no sound from the microphone for 3 s — is it "
                                            "muted? Unmute it in the sound settings, or choose "
                                            "one in the Source list")

        players[0].wait(30)
        pulse.pactl("set-source-mute", "virtmic", "0")
        players.append(pulse.play(speech_you[0], sink="micfeed", wait=False))
        qtbot.waitUntil(lambda: "no sound" not in app.overlay.status.text, timeout=5000)
        assert "no sound" not in app.window.notice.text()
        qtbot.waitUntil(lambda: (app.window.levels.level_of("You") or (-60, ""))[0] > -40,
                        timeout=5000)
        app.toggle_captioning()
        qtbot.waitUntil(lambda: app.state == "off", timeout=15000)
        assert not app.window.levels.isVisible() and app.window.levels.level_of("You") is None
    finally:
        for p in players:
            p.kill()
        pulse.pactl("set-source-mute", "virtmic", "0", check=False)


def test_a_sound_server_outage_shows_in_the_overlay_until_audio_is_back(qtbot, make_app, pulse):
    app = make_app(_settings("system"))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=15000)
    pulse.kill()
    qtbot.waitUntil(lambda: "audio" in app.overlay.status.text, timeout=10000)
    print("the overlay during the outage:", app.overlay.status.text)
    assert app.overlay.status.said_by_notice  # the window's notice speaks it: heard once
    if SHOTS:
        app.overlay.resize(960, app.overlay.height())  # the width it has on a 1400 px screen
        app.overlay.grab().save(str(Path(SHOTS) / "overlay-sound-server-gone.png"))
    pulse.restart()
    qtbot.waitUntil(lambda: app.overlay.status.text == "", timeout=20000)
    assert app.state == "on"


def test_a_bar_is_renamed_with_a_new_figure_at_most_once_a_second_and_at_once_when_silent(qtbot):
    from voxcap.gui.main.input_levels import InputLevelBars

    bars = InputLevelBars()
    qtbot.addWidget(bars)
    bars.show_levels({"You": -23.2})
    assert _bar_name_of(bars, "You") == "You input level, -23 dB" and bars.level_of("You") == (-23, "-23 dB")
    bars.show_levels({"You": -31.0})
    assert bars.level_of("You") == (-31, "-31 dB")  # the bar follows at once...
    assert _bar_name_of(bars, "You") == "You input level, -23 dB"  # ...its name within a second
    bars.show_levels({"You": -75.0})
    assert _bar_name_of(bars, "You") == "You input level, silent" and bars.level_of("You") == (-60, "silent")
    bars.show_levels({})
    assert bars.level_of("You") is None and bars.isHidden()


def _bar_name_of(bars, label: str) -> str:
    return bars._rows[label][1].accessibleName()
