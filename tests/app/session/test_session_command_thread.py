"""The controller's command thread (app/session/command_thread.py)."""

from __future__ import annotations

import threading

from voxcap.app.session.command_thread import EXIT, CommandThread
from voxcap.errors import CaptureError
from voxcap.events import AppProblem


def test_commands_run_in_order_failures_are_said_and_exit_ends_it():
    said, ran, done = [], [], threading.Event()
    thread = CommandThread(said.append, name="test-commands")

    def broken():
        raise RuntimeError("boom")

    def refused():
        raise CaptureError("No such device.", "pick another")

    thread.submit(ran.append, 1)
    thread.submit(broken)
    thread.submit(refused)
    thread.submit(ran.append, 2)  # the failures above do not stop it
    thread.submit(lambda: EXIT)
    thread.submit(done.set)  # never runs: the thread has ended
    thread.join(5.0)
    assert ran == [1, 2]
    assert not done.is_set()
    assert said[0].where == "app" and "RuntimeError('boom')" in said[0].message
    assert said[1] == AppProblem("No such device.", "pick another", "engine")
