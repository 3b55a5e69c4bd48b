"""The notices every front end shows: which of the controller's events are said to the person
captioning, and in which words. The GUI puts them in its notice line, the terminal front end
prints them on stderr; both ask ``notice_for``, so neither can drop one the other shows.

The words are written for the terminal (command-line flags in fixes); the GUI rewrites those
for the app as it shows them (``gui.plain_words``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..captions.journal import JournalStatus
from ..events import (
    AppProblem,
    CaptureDeviceChanged,
    CaptureInterrupted,
    CaptureLoss,
    CaptureRecovered,
    CaptureStarted,
    CaptureStopped,
    DevicesChanged,
    StreamFinished,
    StreamGap,
    StreamInterrupted,
    StreamResumed,
)


@dataclass(frozen=True)
class Notice:
    """``topic``: what it is about ("capture", "engine", "note", "problem", "warning"), the
    terminal's prefix; ``cause``: what a later event clears it by in the GUI (the event's type,
    or the problem's area); ``urgent``: the person has to act (a screen reader interrupts)."""

    topic: str
    message: str
    fix: str = ""
    cause: str = ""
    urgent: bool = False

    def line(self) -> str:
        """As the terminal prints it."""
        return f"{self.topic}: {self.message}" + (f"\n  fix: {self.fix}" if self.fix else "")


Labels = Mapping[str, str]  # stream id -> its source's label ("Them", "You")


def _capture(ev, _labels: Labels) -> Notice | None:
    return Notice("capture", ev.message, cause=type(ev).__name__) if ev.message else None


def _stream(ev, labels: Labels) -> Notice | None:
    """The remote engine's stream news (audio lost, server gone, back): never silent."""
    if not ev.message:
        return None
    label = labels.get(ev.stream_id)
    return Notice("engine", f"{label}: {ev.message}" if label else ev.message,
                  cause=type(ev).__name__)


def _finished(ev: StreamFinished, labels: Labels) -> Notice | None:
    if ev.reason != "max_length":  # an error ends captioning: the state's message says it
        return None
    return Notice("note", f"{labels.get(ev.stream_id, 'a stream')}: the session reached its "
                  "max length", "raise --max-model-len for longer sessions",
                  cause="StreamFinished")


def _problem(ev: AppProblem, _labels: Labels) -> Notice:
    return Notice("problem", ev.message, ev.fix, cause=ev.where, urgent=True)


def _journal(ev: JournalStatus, _labels: Labels) -> Notice:
    return Notice("warning", ev.message, ev.fix, cause="journal", urgent=not ev.writing)


def _devices(ev: DevicesChanged, _labels: Labels) -> Notice | None:
    if ev.server_up:
        return None
    return Notice("capture", "The sound server is not running: no devices to capture from.",
                  "start PulseAudio or PipeWire (it usually starts with the desktop)",
                  cause="sound server", urgent=True)


NOTICES: dict[type, Callable[..., Notice | None]] = {
    CaptureStarted: _capture, CaptureInterrupted: _capture, CaptureRecovered: _capture,
    CaptureDeviceChanged: _capture, CaptureLoss: _capture, CaptureStopped: _capture,
    StreamGap: _stream, StreamInterrupted: _stream, StreamResumed: _stream,
    StreamFinished: _finished, AppProblem: _problem, JournalStatus: _journal,
    DevicesChanged: _devices,
}


def notice_for(event, labels: Labels | None = None) -> Notice | None:
    """The notice ``event`` gives, None if it gives none. ``labels`` names the streams."""
    build = NOTICES.get(type(event))
    return build(event, labels or {}) if build else None
