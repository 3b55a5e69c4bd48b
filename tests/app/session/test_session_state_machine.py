"""The captioning states' legal transitions (app/session/state_machine.py)."""

from __future__ import annotations

import logging

from voxcap.app.session.state_machine import (
    ACTIVE,
    CAPTURING,
    TRANSITIONS,
    CaptioningStateMachine,
    legal,
)
from voxcap.events import Captioning, CaptioningState

C = Captioning


def test_the_table_knows_every_state_and_each_can_end():
    assert set(TRANSITIONS) == set(Captioning)
    for state in Captioning:
        assert legal(state, C.CLOSED)  # shutdown, from anywhere
        if state not in (C.OFF, C.CLOSED):
            assert legal(state, C.OFF) or legal(state, C.STOPPING), state
    for state in CAPTURING:  # what pause, stop and an engine failure do to a capturing session
        assert {C.PAUSED, C.STOPPING, C.OFF} <= TRANSITIONS[state], state


def test_the_courses_of_a_session_are_legal():
    courses = [
        (C.OFF, C.STARTING, C.WAITING, C.ON, C.RESTARTING, C.ON, C.STOPPING, C.OFF),
        (C.OFF, C.STARTING, C.ON, C.PAUSED, C.WAITING, C.ON, C.PAUSED, C.STOPPING, C.OFF),
        (C.OFF, C.STARTING, C.OFF),  # no capture could start
        (C.OFF, C.OFF),  # refused: the engine is not running
    ]
    for course in courses:
        assert all(legal(a, b) for a, b in zip(course, course[1:], strict=False)), course


def test_nonsense_is_illegal():
    assert not legal(C.OFF, C.ON)  # captioning starts through STARTING
    assert not legal(C.OFF, C.PAUSED)
    assert not legal(C.STOPPING, C.ON)
    assert not legal(C.CLOSED, C.STARTING)  # closed is the end
    assert C.PAUSED in ACTIVE and C.PAUSED not in CAPTURING


def test_each_move_is_published_and_an_illegal_one_logged_as_a_bug(caplog):
    published = []
    machine = CaptioningStateMachine(published.append)
    machine.move_to(C.STARTING, "s1", ("Them",))
    assert machine.capturing and machine.active
    assert published == [CaptioningState(C.STARTING, "s1", ("Them",), "")]
    with caplog.at_level(logging.ERROR):
        machine.move_to(C.PAUSED, "s1", ("Them",), "paused")  # legal: no error
        assert not caplog.records
        machine.move_to(C.STARTING, "s1", ("Them",))  # from PAUSED: resume goes to WAITING or ON
    assert "not a legal transition" in caplog.text
    assert machine.state == C.STARTING  # made all the same: captioning goes on
