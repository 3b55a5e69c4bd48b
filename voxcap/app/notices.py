"""The notices every front end shows: which of the controller's events are said to the person
captioning, and in which words. The GUI puts them in its notice line, the terminal front end
prints them on stderr; both ask ``notice_for``, so neither can drop one the other shows.

A setting named in a fix is a marker (``setting_refs``): the terminal says its flag, the GUI
its row in Settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import events
from ..captions.journal import JournalStatus
from ..setting_refs import ref


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
    lifetime_s: float = 0.0  # news that goes stale (capturing again...): gone after this; 0: stays
    spoken: bool = True  # False: shown, not announced (a stop the person asked for, nothing lost)

    def line(self) -> str:
        """As the terminal prints it."""
        return f"{self.topic}: {self.message}" + (f"\n  fix: {self.fix}" if self.fix else "")


Labels = Mapping[str, str]  # stream id -> its source's label ("Them", "You")


NEWS_S = 10.0  # "capturing again", "the server is back": good news, read and gone
LOSS_S = 30.0  # audio lost so far: long enough to be read after a glance away


def _capture(event, _labels: Labels) -> Notice | None:
    if not event.message:
        return None
    lifetime = {events.CaptureInterrupted: 0.0, events.CaptureLoss: LOSS_S}.get(type(event), NEWS_S)
    if getattr(event, "reason", "") == "echo lost":  # a problem: stays until the canceller is back
        lifetime = 0.0
    # a stop is asked for (Pause, Stop): the state says it; only a loss in it is news to hear
    quiet = isinstance(event, events.CaptureStopped) and not (
        event.dropped_blocks or event.overflows or event.interruptions or event.gap_seconds >= 0.005)
    return Notice("capture", event.message, cause=type(event).__name__, lifetime_s=lifetime,
                  spoken=not quiet)


def _stream(event, labels: Labels) -> Notice | None:
    """The remote engine's stream news (audio lost, server gone, back): never silent."""
    if not event.message:
        return None
    label = labels.get(event.stream_id)
    return Notice("engine", f"{label}: {event.message}" if label else event.message,
                  cause=type(event).__name__,
                  lifetime_s=NEWS_S if isinstance(event, events.StreamResumed) else 0.0)


def _finished(event: events.StreamFinished, labels: Labels) -> Notice | None:
    if event.reason != "max_length":  # an error ends captioning: the state's message says it
        return None
    return Notice("note", f"{labels.get(event.stream_id, 'a stream')}: the session reached its "
                  "max length", f"raise {ref('max_model_len')} for longer sessions",
                  cause="StreamFinished")


def _problem(event: events.AppProblem, _labels: Labels) -> Notice:
    return Notice("problem", event.message, event.fix, cause=event.where, urgent=True)


def _journal(event: JournalStatus, _labels: Labels) -> Notice:
    return Notice("warning", event.message, event.fix, cause="journal", urgent=not event.writing)


def _devices(event: events.DevicesChanged, _labels: Labels) -> Notice | None:
    if event.server_up:
        return None
    return Notice("capture", "The sound server is not running: no devices to capture from.",
                  "start PulseAudio or PipeWire (it usually starts with the desktop)",
                  cause="sound server", urgent=True)


def _caption_watch(event: events.CaptionWatch, _labels: Labels) -> Notice:
    """The caption watchdog: speech with no captions, the fresh session tried, their return."""
    # each step a cause of its own: a front end may speak one cause only now and then, and the
    # fresh session and the captions' return follow the alarm within seconds
    cause = f"CaptionWatch {event.state}"
    if not event.missing:
        return Notice("note", event.message, cause=cause, lifetime_s=NEWS_S)
    fix = {"missing": "voxcap starts a fresh caption session if it goes on",
           "still_missing": "stop captioning and start again; if it repeats, restart the engine"
           }.get(event.state, "")
    # the alarm interrupts once; what follows (the fresh session, its outcome) does not
    return Notice("captions", event.message, fix, cause=cause, urgent=event.state == "missing")


def _silence(event: events.SourceSilence, _labels: Labels) -> Notice:
    """A source with no sound for long: said once, with what to check; its return, quietly."""
    cause = f"silence {event.source}"  # its return replaces (clears) the alarm, not other news
    if not event.silent:
        return Notice("capture", event.message, cause=cause, lifetime_s=NEWS_S, spoken=False)
    return Notice("capture", event.message, event.fix, cause=cause)


NOTICES: dict[type, Callable[..., Notice | None]] = {
    events.CaptureStarted: _capture, events.CaptureInterrupted: _capture,
    events.CaptureRecovered: _capture, events.CaptureDeviceChanged: _capture,
    events.CaptureLoss: _capture, events.CaptureStopped: _capture,
    events.StreamGap: _stream, events.StreamInterrupted: _stream, events.StreamResumed: _stream,
    events.StreamFinished: _finished, events.AppProblem: _problem, JournalStatus: _journal,
    events.DevicesChanged: _devices, events.CaptionWatch: _caption_watch,
    events.SourceSilence: _silence,
}


def notice_for(event, labels: Labels | None = None) -> Notice | None:
    """The notice ``event`` gives, None if it gives none. ``labels`` names the streams."""
    build = NOTICES.get(type(event))
    return build(event, labels or {}) if build else None
