"""The journal feed (app/session/journal_feed.py), with the real journal on disk."""

from __future__ import annotations

import time

from voxcap.app.session.journal_feed import JournalFeed
from voxcap.captions.sessions import SessionStore
from voxcap.engine.settings import InProcessSettings
from voxcap.events import EngineProgress, StreamFinished, TextDelta


def _delta(sid, k):
    return TextDelta(sid, f" w{k}", (k,), k, k * 0.08, (k + 1) * 0.08, time.time())


def test_what_reached_the_feed_is_written_before_the_journal_closes(tmp_path):
    feed = JournalFeed(lambda e: None, tmp_path)
    sid = feed.open(InProcessSettings("/tmp/model", graph_mode="PIECEWISE"), None,
                    {"Them": "Monitor", "You": "Microphone"}, "live")
    assert sid and feed.session() is not None
    feed.stream_opened("s1", label="Them", source="Monitor")
    for k in range(200):
        feed.take(_delta("s1", k))  # on the engine's thread in the app: queued, not written here
    feed.take(EngineProgress("loading", "", 1.0))  # not journalled
    feed.take(StreamFinished("s1", "flushed", 200, 16.0))
    feed.close()  # waits for everything queued before it
    feed.take(_delta("s1", 999))  # after the close: no journal to feed
    assert feed.session() is None
    feed.stop()
    session = SessionStore(tmp_path).open(sid)
    assert len(session.records) == 200 and session.info.ended is not None
    assert session.info.title == "Monitor + Microphone"  # live: the devices
    assert session.info.settings["graph_mode"] == "PIECEWISE"
    assert session.info.settings["sources"] == {"Them": "Monitor", "You": "Microphone"}


def test_a_file_session_is_titled_by_its_file_and_off_means_no_journal(tmp_path):
    feed = JournalFeed(lambda e: None, tmp_path)
    sid = feed.open(None, None, {"talk.wav": "/tmp/talk.wav"}, "transcribe")
    feed.close()
    assert SessionStore(tmp_path).open(sid).info.title == "talk.wav"
    off = JournalFeed(lambda e: None, tmp_path / "off", enabled=False)
    assert off.open(None, None, {"Them": "Monitor"}, "live") == ""
    off.take(_delta("s1", 0))
    off.paused()  # nothing open: nothing to record, no error
    off.close()
    assert not (tmp_path / "off").exists()
    feed.stop()
    off.stop()


class BrokenJournal:
    def on_event(self, event):
        raise OSError("disk on fire")

    def close(self):
        pass


def test_a_journal_failure_is_said_and_the_feed_goes_on(tmp_path):
    said = []
    feed = JournalFeed(said.append, tmp_path)
    feed._journal = BrokenJournal()  # a journal that fails the way no real one should
    feed.take(_delta("s1", 0))
    feed.close()
    assert said and said[0].where == "journal" and "disk on fire" in said[0].message
    sid = feed.open(None, None, {"Them": "Monitor"}, "live")  # the feed still works
    feed.take(_delta("s1", 1))
    feed.close()
    feed.stop()
    assert len(SessionStore(tmp_path).open(sid).records) == 1
