"""The one flush policy (app/session/stream_flush.py), on the scripted engine."""

from __future__ import annotations

import threading
import time

from support.gui_fakes import ScriptedEngine

from voxcap.app.session.stream_flush import StreamFlush


class HungEngine(ScriptedEngine):
    """Closes nothing: the flush never finishes and the engine says nothing."""

    def close_stream(self, stream_id):
        pass


def _open(cls, n=2):
    eng = cls(None, lambda e: None, start_s=0.0).start()
    eng.wait_ready(5.0)
    return eng, [eng.open_stream(f"s{i}") for i in range(n)]


def test_the_last_words_are_waited_for():
    said = []
    eng, sids = _open(ScriptedEngine)
    eng.flush_s = 0.3  # the delayed last words take a while
    StreamFlush(said.append, timeout_s=5.0).flush(eng, sids)
    assert eng.open_stream_ids() == [] and said == []
    eng.shutdown()


def test_an_engine_that_makes_no_progress_is_given_up_on_after_the_timeout():
    said = []
    eng, sids = _open(HungEngine)
    t0 = time.monotonic()
    StreamFlush(said.append, timeout_s=0.3).flush(eng, sids)
    assert 0.3 <= time.monotonic() - t0 < 5
    (problem,) = said
    assert "produced nothing for 0.3 s" in problem.message and problem.fix
    assert eng.open_stream_ids() == []  # aborted
    eng.shutdown()


def test_abort_ends_the_wait_at_once():
    said = []
    eng, sids = _open(HungEngine, 1)
    flush = StreamFlush(said.append, timeout_s=30.0)
    flush.abort()
    t0 = time.monotonic()
    flush.flush(eng, sids)
    assert time.monotonic() - t0 < 5
    assert "given up on request" in said[0].message and said[0].fix == ""
    flush.rearm()  # a new start: the old abort no longer counts
    flush.flush(None, sids)  # no engine: nothing to wait for
    assert len(said) == 1
    eng.shutdown()


def test_progress_keeps_the_wait_going_past_the_timeout():
    said = []
    eng, sids = _open(HungEngine, 1)
    flush = StreamFlush(said.append, timeout_s=0.3)

    def engine_working():  # signs of life for twice timeout_s, then the stream is done
        for _ in range(6):
            time.sleep(0.1)
            flush.progress()
        ScriptedEngine.close_stream(eng, sids[0])

    threading.Thread(target=engine_working, daemon=True).start()
    flush.flush(eng, sids)
    assert said == [] and eng.open_stream_ids() == []
    eng.shutdown()
