"""The one helper for a thread with its own asyncio event loop (voxcap/loop_thread.py), used by
the caption server and the OBS caption sender: calls from other threads run on the loop, a
coroutine's result comes back, a failing main is logged and not raised, and after the end the
loop is closed and late calls are dropped."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from voxcap.loop_thread import LoopThread


def test_calls_from_any_thread_run_on_the_loop_until_it_ends():
    stop = asyncio.Event()
    seen: list = []

    async def main():
        await stop.wait()
        return "done"
    lt = LoopThread(main, name="voxcap-test-loop", what="the test loop")
    assert lt.loop is None and lt.call_soon(seen.append, 1) is False  # not started: dropped
    assert lt.start(5) and lt.alive
    callers = [threading.Thread(target=lambda i=i: lt.call_soon(
        lambda: seen.append((i, threading.current_thread().name)))) for i in range(5)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()

    async def where():
        return threading.current_thread().name, asyncio.get_running_loop() is lt.loop
    assert lt.run(where(), timeout=5) == ("voxcap-test-loop", True)
    assert sorted(seen) == [(i, "voxcap-test-loop") for i in range(5)]

    async def boom():
        raise KeyError("from the loop")
    with pytest.raises(KeyError):  # a coroutine's exception comes back to the caller
        lt.run(boom(), timeout=5)
    assert lt.call_soon(stop.set)
    assert lt.join(5) and not lt.alive
    assert lt.loop is None  # closed
    assert lt.call_soon(seen.append, "late") is False and "late" not in seen
    with pytest.raises(RuntimeError, match="the test loop is not running"):
        lt.run(where(), timeout=1)


def test_a_failing_main_is_logged_not_raised(caplog):
    async def main():
        raise ValueError("broken")
    lt = LoopThread(main, name="voxcap-test-fail", what="the failing part",
                    logger=logging.getLogger("voxcap.test"))
    with caplog.at_level(logging.ERROR, logger="voxcap.test"):
        lt.start(5)
        assert lt.join(5)
    (record,) = [r for r in caplog.records if r.name == "voxcap.test"]
    assert record.getMessage() == "the failing part failed" and record.exc_info[0] is ValueError


def test_the_share_server_and_the_obs_sender_use_it():
    """Written once: neither module makes a loop or a thread of its own."""
    from pathlib import Path

    share = Path(__file__).parents[1] / "voxcap" / "share"
    for name in ("server.py", "obs.py"):
        text = (share / name).read_text(encoding="utf-8")
        assert "LoopThread(" in text, name
        assert "new_event_loop" not in text and "threading.Thread(" not in text, name
