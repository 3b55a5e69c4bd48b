"""Capture routing with the hold buffer (app/session/capture_routing.py): the scripted engine
takes the audio; the fake sound server's captures deliver it."""

from __future__ import annotations

import numpy as np
from support.gui_fakes import FakeAudio, ScriptedEngine

from voxcap.app.lag import CaptureClock
from voxcap.app.session.capture_routing import CaptureRouting
from voxcap.capture.sources import parse_sources
from voxcap.errors import CaptureError
from voxcap.events import AudioBlock


def _engine():
    eng = ScriptedEngine(None, lambda e: None, start_s=0.0).start()
    eng.wait_ready(5.0)
    return eng


def _block(label, value, seconds=0.02, at=100.0):
    return AudioBlock(label, np.full(int(seconds * 16000), value, np.float32), at)


def _routing(eng=None, live=True, hold_s=120.0):
    said = []
    routing = CaptureRouting(said.append, CaptureClock(), lambda: eng, lambda: live, hold_s)
    return routing, said


def test_audio_is_held_until_connected_then_pushed_in_order_before_the_live_blocks():
    eng = _engine()
    routing, said = _routing(eng)
    routing.expect(["Them"])
    for i in range(3):
        routing.on_block("Them", _block("Them", i, at=100.0 + i))
    assert routing.held_s() == 0.06
    sid = eng.open_stream("Them")
    pushed = []
    eng.push_audio = lambda s, samples: pushed.append((s, float(samples[0])))
    routing.connect("Them", sid, eng)
    routing.on_block("Them", _block("Them", 7))
    assert pushed == [(sid, 0.0), (sid, 1.0), (sid, 2.0), (sid, 7.0)]
    assert routing.held_s() == 0 and routing.stream_of("Them") == sid
    routing.hold_all()  # a restart: held again
    routing.on_block("Them", _block("Them", 8))
    assert len(pushed) == 4 and routing.held_s() == 0.02
    assert said == []
    eng.shutdown()


def test_live_audio_is_held_up_to_hold_s_and_the_loss_said_once():
    routing, said = _routing(hold_s=0.1)
    routing.expect(["Them"])
    for _ in range(10):
        routing.on_block("Them", _block("Them", 0.1, seconds=0.02))
    assert round(routing.held_s(), 3) == 0.1
    assert round(routing.dropped_s(), 3) == 0.1
    (problem,) = said
    assert problem.where == "held" and "oldest held audio is being dropped" in problem.message


def test_a_file_is_held_whole():
    routing, said = _routing(live=False, hold_s=0.1)
    routing.expect(["talk.wav"])
    for _ in range(10):
        routing.on_block("talk.wav", _block("talk.wav", 0.1))
    assert round(routing.held_s(), 3) == 0.2 and routing.dropped_s() == 0 and said == []


def test_after_close_blocks_are_ignored_and_losses_are_running_totals():
    routing, _ = _routing()
    routing.expect(["Them", "You"])
    routing.forget(["You"])
    assert routing.routed("Them") and not routing.routed("You")
    routing.close()
    routing.on_block("Them", _block("Them", 0.1))
    assert routing.held_s() == 0 and not routing.routed("Them")
    routing.record_loss(("Them", "overflow"), 0.5)
    routing.record_loss(("Them", "overflow"), 0.75)  # a total, not an increment
    routing.record_loss(("gap", "s1"), 0.25)
    assert routing.dropped_s() == 1.0


class OneMissing(FakeAudio):
    def open(self, spec, on_block, on_event):
        if spec.label == "You":
            raise CaptureError("No microphone.", "plug one in")
        return super().open(spec, on_block, on_event)


def test_captures_are_opened_their_failures_returned_and_stopped_together():
    audio = OneMissing()
    routing, _ = _routing()
    sources = [(spec, "") for spec in parse_sources("both")]
    routing.expect(["Them", "You"])
    failed = routing.open_captures(sources, audio, lambda e: None)
    assert [(spec.label, exc.message) for spec, exc in failed] == [("You", "No microphone.")]
    audio.feed("Them", 0.1)  # the capture's blocks come through the routing: held
    assert round(routing.held_s(), 3) == 0.1
    routing.stop_captures()
    assert audio.captures["Them"].stopped and routing.routed("Them")  # routes stay (a pause)
