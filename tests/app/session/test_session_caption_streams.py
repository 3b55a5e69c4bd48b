"""The session's engine streams (app/session/caption_streams.py): the scripted engine, the real
journal, routing and clock."""

from __future__ import annotations

from support.gui_fakes import ScriptedEngine

from voxcap.app.lag import CaptureClock
from voxcap.app.session.caption_streams import CaptionStreams
from voxcap.app.session.capture_routing import CaptureRouting
from voxcap.app.session.journal_feed import JournalFeed
from voxcap.app.session.stream_flush import StreamFlush
from voxcap.captions.sessions import SessionStore
from voxcap.capture.sources import parse_sources
from voxcap.errors import EngineError
from voxcap.events import StreamOpened


class OneStreamOnly(ScriptedEngine):
    def open_stream(self, label=""):
        if label == "You":
            raise EngineError("No room for another stream.", "raise max streams")
        return super().open_stream(label)


def _parts(tmp_path, eng):
    said = []
    clock = CaptureClock()
    journal = JournalFeed(said.append, tmp_path)
    routing = CaptureRouting(said.append, clock, lambda: eng, lambda: True)
    streams = CaptionStreams(said.append, clock, journal, routing, StreamFlush(said.append, 5.0))
    return said, journal, routing, streams


def test_streams_open_journalled_and_announced_a_refused_one_said_and_flushed_together(tmp_path):
    eng = OneStreamOnly(None, lambda e: None, start_s=0.0).start()
    eng.wait_ready(5.0)
    said, journal, routing, streams = _parts(tmp_path, eng)
    sources = [(spec, f"{spec.label} device") for spec in parse_sources("both")]
    session = journal.open(None, None, {"Them": "Them device"}, "live")
    routing.expect(["Them", "You"])
    streams.open_all(eng, sources, set())
    opened = [e for e in said if isinstance(e, StreamOpened)]
    assert [(e.label, e.source) for e in opened] == [("Them", "Them device")]
    assert [p.message for p in said if not isinstance(p, StreamOpened)] == [
        "You: No room for another stream."]
    assert streams and routing.stream_of("Them") == opened[0].stream_id
    assert eng.open_stream_ids() == [opened[0].stream_id]
    streams.flush(eng)
    assert not streams and eng.open_stream_ids() == []
    assert streams.finished(opened[0].stream_id) is None  # flushed: no longer open
    journal.close()
    journal.stop()
    assert SessionStore(tmp_path).open(session).labels == {opened[0].stream_id: "Them"}
    eng.shutdown()


def test_a_source_that_ended_meanwhile_is_closed_after_its_held_audio(tmp_path):
    eng = ScriptedEngine(None, lambda e: None, start_s=0.0).start()
    eng.wait_ready(5.0)
    said, journal, routing, streams = _parts(tmp_path, eng)
    (spec,) = parse_sources("system")
    routing.expect(["Them"])
    streams.open_all(eng, [(spec, "Monitor")], {"Them"})
    (opened,) = [e for e in said if isinstance(e, StreamOpened)]
    assert eng.wait_stream(opened.stream_id, 5.0)
    assert eng.open_stream_ids() == []  # closed at once: the engine flushed it
    journal.stop()
    eng.shutdown()
