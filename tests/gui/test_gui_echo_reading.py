"""The meter's "Streams from" row says what each source reads now, echo cancelling included
(offscreen Qt, fake audio; the capture's events themselves are tested against real servers in
tests/capture/test_echo_rebuild.py)."""

from __future__ import annotations

from voxcap.events import CaptureDeviceChanged, CaptureInterrupted, CaptureRecovered, CaptureStarted

MIC = "Virtual Microphone"
ON = f"{MIC} (echo cancelled by voxcap)"
LOST = f"{MIC} (echo cancelling lost — rebuilding)"


def test_the_meter_follows_the_echo_canceller_lost_and_rebuilt(qtbot, make_app):
    app = make_app()
    w = app.window
    row = w.meter.values["sources"]
    app.on_event(CaptureStarted("Them", "vspeaker.monitor", "Monitor of Speakers", 48000, 2, ""))
    app.on_event(CaptureStarted("You", "voxcap_ec_mic_1", ON, 48000, 2, "You: capturing"))
    assert row.text() == f"Them: Monitor of Speakers; You: {ON}"
    app.on_event(CaptureInterrupted("You", "server gone", "You: audio stopped: reconnecting"))
    app.on_event(CaptureDeviceChanged("You", ON, LOST, "echo lost",
                                      "You: echo cancelling lost — rebuilding (the sound server went away)"))
    assert row.text() == f"Them: Monitor of Speakers; You: {LOST}"
    assert "rebuilding" in w.notice.text()
    assert not w._notice_expiry.isActive()  # a problem: stays until the canceller is back
    app.on_event(CaptureRecovered("You", "virtmic", LOST, 2.5, f"You: capturing again from '{LOST}'"))
    assert row.text().endswith(f"You: {LOST}")
    app.on_event(CaptureDeviceChanged("You", LOST, ON, "echo on", "You: echo cancellation on"))
    assert row.text().endswith(f"You: {ON}")
    app.on_event(CaptureDeviceChanged("You", ON, f"{MIC} (not echo cancelled: the output 'P' is "
                                      "headphones)", "echo off", "You: echo cancellation off"))
    assert row.text().endswith("You: Virtual Microphone (not echo cancelled: the output 'P' is headphones)")
