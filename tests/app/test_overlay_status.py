"""The overlay's status band: what it says for each of the controller's states, and lateness
marked until captions are live again (the overlay itself: tests/gui/test_gui_overlay_status.py)."""

from __future__ import annotations

from voxcap.app.overlay_status import LATE_S, NAMED_S, OverlayStatusTracker
from voxcap.events import (
    Captioning,
    CaptioningState,
    CaptureInterrupted,
    CaptureRecovered,
    CaptureStarted,
    DevicesChanged,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    SourceSilence,
)

READY = EngineReady("FULL_DECODE_ONLY", "FULL_DECODE_ONLY", (1,), 1.0, "cpu", 480, 4096, 2)


def _feed(tracker, *events):
    for ev in events:
        tracker.on_event(ev)
    return tracker.status


def test_every_state_is_said_and_old_rows_are_marked():
    t = OverlayStatusTracker()
    assert _feed(t, EngineProgress("loading weights")).text == "Engine starting — loading weights"
    s = _feed(t, CaptioningState(Captioning.WAITING))
    assert s.text == "Waiting for the engine — loading weights — audio is kept"
    s = _feed(t, READY, CaptioningState(Captioning.ON))
    assert (s.text, s.rows_current) == ("", True)  # live: nothing over the captions
    s = _feed(t, EngineRestarting("graph mode"), CaptioningState(Captioning.RESTARTING),
              EngineProgress("capturing graphs"))
    assert s.text.startswith("Engine restarting — capturing graphs") and not s.rows_current
    s = _feed(t, READY, CaptioningState(Captioning.ON), CaptioningState(Captioning.PAUSED))
    assert s.text.startswith("Paused") and not s.rows_current
    s = _feed(t, CaptioningState(Captioning.STOPPING), CaptioningState(Captioning.OFF))
    assert s.text == "Stopped — not captioning" and not s.rows_current
    s = _feed(t, EngineFailed("the GPU fell off the bus", "restart the computer"))
    assert s.text == "Engine error: the GPU fell off the bus — restart the computer"
    assert s.error and not s.rows_current
    s = _feed(t, EngineProgress("importing"), CaptioningState(Captioning.STARTING))
    assert s.text == "Starting captioning — importing" and not s.error


def test_a_restart_while_nothing_is_captioned_keeps_no_audio():
    """Audio is held through a restart only while a session captures it: with captioning off
    (never started, or stopped) the band does not promise it."""
    for before in ((), (CaptioningState(Captioning.ON), CaptioningState(Captioning.OFF))):
        t = OverlayStatusTracker()
        s = _feed(t, READY, *before, EngineRestarting("graph mode"))
        assert s.text == "Engine restarting — not captioning", s.text
        s = _feed(t, EngineProgress("compiling"))
        assert s.text == "Engine restarting — compiling — not captioning", s.text
    s = _feed(t, CaptioningState(Captioning.WAITING))  # Start during the restart: now it is kept
    assert s.text == "Engine restarting — compiling — audio is kept, captions follow", s.text


def test_late_captions_are_marked_until_live_again():
    t = OverlayStatusTracker()
    _feed(t, READY, CaptioningState(Captioning.ON))
    assert t.on_lateness(1.0) is None
    s = t.on_lateness(25.2)
    assert s.text == "Catching up — 25 s behind" and s.rows_current
    assert t.on_lateness(4.0).text == "Catching up — 4 s behind"  # not yet live: no flapping
    assert t.on_lateness(None) is None  # unknown: as it was
    assert t.on_lateness(LATE_S - 3).text == ""  # live again
    t.on_lateness(30)
    s = _feed(t, CaptioningState(Captioning.PAUSED))
    assert "behind" not in s.text  # a pause ends lateness
    assert t.on_lateness(30) is None  # not captioning: not late


def test_speech_without_captions_is_said_over_lateness_until_they_are_back():
    from voxcap.app.notices import notice_for
    from voxcap.events import CaptionWatch

    t = OverlayStatusTracker()
    _feed(t, READY, CaptioningState(Captioning.ON))
    missing = CaptionWatch("s1", "Them", "missing", 8.0, "Them: speech, but no captions for 8 s")
    s = _feed(t, missing)
    assert (s.text, s.topic) == ("Them: speech, but no captions for 8 s", "no captions")
    assert t.on_lateness(LATE_S + 20) is None  # absence is the worse news: it stays said
    notice = notice_for(missing)
    assert notice.message == missing.message and notice.urgent  # screen readers: at once
    fresh = CaptionWatch("s1", "Them", "fresh_session", 15.0, "Them: speech, but no captions "
                         "for 15 s — starting a fresh caption session")
    assert _feed(t, fresh).topic == "no captions" and not notice_for(fresh).urgent  # heard once
    back = CaptionWatch("s1", "Them", "back", 0.0, "Them: captions are back")
    assert _feed(t, back).text.startswith("Catching up")
    assert notice_for(back).message == "Them: captions are back"
    _feed(t, missing, CaptioningState(Captioning.STOPPING), CaptioningState(Captioning.OFF),
          CaptioningState(Captioning.ON))
    assert t.status.text == ""  # a new session starts without the old alarm


def test_pause_and_resume_are_said_as_asked_until_the_controller_answers():
    from voxcap.events import AppProblem

    t = OverlayStatusTracker()
    _feed(t, READY, CaptioningState(Captioning.ON))
    s = t.on_asked("pausing")  # F6: before the last words' flush is done
    assert s is not None and s.text.startswith("Pausing") and s.window_says
    s = _feed(t, CaptioningState(Captioning.PAUSED))
    assert s.text.startswith("Paused") and s.window_says
    t.on_asked("resuming")
    assert t.status.text.startswith("Resuming")
    s = _feed(t, AppProblem("The engine is not running.", "start it", "engine"))  # refused
    assert s.text.startswith("Paused")  # still paused, said as it is
    assert _feed(t, AppProblem("Something else.", "", "capture")) == s  # no ask: no change


def test_a_sound_server_outage_and_a_capture_without_audio_are_said_until_back():
    """The issue's 4.9 s PulseAudio outage showed only in the main window's notice line."""
    t = OverlayStatusTracker()
    _feed(t, READY, CaptioningState(Captioning.ON))
    s = _feed(t, CaptureInterrupted("Them", "server gone",
                                    "Them: audio stopped (the sound server went away): reconnecting"))
    assert s.text == "Them: no audio — reconnecting"  # one line: the notice has the why
    assert s.said_by_notice and s.rows_current  # the notice speaks it; the rows are still the newest
    s = _feed(t, DevicesChanged((), server_up=False))
    assert s.text == "No audio — sound server not running"
    s = _feed(t, DevicesChanged((), server_up=True))
    assert s.text == "Them: no audio — reconnecting"  # the capture is not back yet
    s = _feed(t, CaptureRecovered("Them", "vspeaker.monitor", "Monitor", 4.9, "Them: capturing again"))
    assert s.text == ""
    _feed(t, CaptioningState(Captioning.WAITING), DevicesChanged((), server_up=False))
    assert t.status.text == "Waiting for the engine; no audio — sound server not running"


def test_a_silent_source_is_shown_with_its_fix_until_its_sound_returns():
    t = OverlayStatusTracker()
    _feed(t, READY, CaptioningState(Captioning.ON))
    s = _feed(t, SourceSilence("You", "silent", 10.0, "You: no sound from the microphone for 10 s",
                               "is it muted? Unmute it…", "microphone muted?"))
    assert s.text == "You: no sound for 10 s — microphone muted?"  # one line: the band's
    assert s.topic == "no sound" and s.said_by_notice
    assert _feed(t, SourceSilence("You", "back", 0.0, "You: sound again")).text == ""
    _feed(t, SourceSilence("You", "silent", 10.0, "You: no sound from the microphone for 10 s"))
    s = _feed(t, CaptioningState(Captioning.STOPPING), CaptioningState(Captioning.OFF),
              CaptioningState(Captioning.STARTING), CaptioningState(Captioning.ON))
    assert s.text == ""  # a new session: the old captures' silence is gone


def _session(t, *sources):
    return _feed(t, CaptioningState(Captioning.STOPPING), CaptioningState(Captioning.OFF),
                 CaptioningState(Captioning.STARTING),
                 *[CaptureStarted(label, device, description, 48000, 2)
                   for label, device, description in sources],
                 CaptioningState(Captioning.ON))


def test_a_switch_of_source_names_what_is_captioned_now():
    """The day walk: after Up Up from "Both" the overlay showed caption rows only; its reader
    could not tell that system audio, not the microphone, was captioned now."""
    now = [100.0]
    t = OverlayStatusTracker(clock=lambda: now[0])
    both = (("Them", "vspeaker.monitor", "Monitor of Virtual Speaker"),
            ("You", "virtmic", "Virtual Microphone"))
    s = _feed(t, READY, CaptioningState(Captioning.STARTING),
              *[CaptureStarted(*src, 48000, 2) for src in both], CaptioningState(Captioning.ON))
    assert s.text == ""  # a start: the person chose it a moment ago
    t.on_switch()
    s = _session(t, both[0])
    assert s.text == "Now captioning Them: Monitor of Virtual Speaker", s
    assert s.rows_current and s.said_by_notice  # the window's notice says it aloud
    now[0] += NAMED_S - 1
    assert t.on_lateness(None) is None
    now[0] += 1
    assert t.on_lateness(None).text == ""  # read, and gone
    s = _session(t, both[1])  # a stop and a start, not a switch: nothing to name
    assert s.text == ""
    t.on_switch()  # Up, Up: the second choice lands while the first switch still runs
    t.on_switch()
    _session(t, both[1])
    assert _session(t, both[0]).text == "Now captioning Them: Monitor of Virtual Speaker"
