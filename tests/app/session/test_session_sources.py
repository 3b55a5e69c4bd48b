"""What a session captures from, and what is said when captures fail (app/session/session_sources.py)."""

from __future__ import annotations

from voxcap.app.session.session_sources import SessionSources
from voxcap.capture.sources import parse_sources
from voxcap.errors import CaptureError
from voxcap.events import AppProblem


def _both():
    them, you = parse_sources("both")
    return [(them, "Monitor"), (you, "Microphone")]


def test_one_failed_half_is_dropped_and_named():
    said = []
    sources = SessionSources(said.append)
    sources.begin("both")
    sources.resolved = _both()
    you = sources.resolved[1][0]
    assert sources.drop_failed([(you, CaptureError("No microphone.", "plug one in"))]) is None
    assert sources.labels == ("Them",)
    (problem,) = said
    assert problem == AppProblem('You: No microphone. Captioning goes on with "Them" only.',
                                 "plug one in", "capture")


def test_none_started_says_each_failure_and_why():
    said = []
    sources = SessionSources(said.append)
    sources.resolved = _both()
    failed = [(spec, CaptureError(f"{spec.label} is gone.", "fix")) for spec, _ in sources.resolved]
    assert sources.drop_failed(failed) == "Them is gone."
    assert [p.message for p in said] == ["Them: Them is gone.", "You: You is gone."]
    assert sources.labels == ("Them", "You")  # kept: a paused session resumes them later
    assert sources.drop_failed([]) is None and len(said) == 2


def test_all_ended_once_every_source_has():
    sources = SessionSources(lambda e: None)
    sources.begin("both")
    sources.resolved = _both()
    sources.end("Them")
    assert not sources.all_ended()
    sources.end("You")
    assert sources.all_ended()
    sources.begin("both")  # a new session forgets the old ends
    assert sources.ended == set() and sources.resolved == []
