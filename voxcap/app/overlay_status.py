"""What the caption overlay says about captioning now, decided from the controller's events.

The overlay is the one screen a deaf or hard-of-hearing reader watches: it must tell silence from
a stalled engine and old speech from new. So besides the caption rows it has a status band that
says, in plain words, anything that is not "live captions": starting (and the engine's stage),
waiting for the engine, restarting, paused, stopped, an engine error with its fix, no audio (the
sound server gone, a capture reconnecting), a source with no sound for long with what to check,
and captions arriving late ("Catching up — 25 s behind") until they are live again. ``rows_current`` False
means the rows on screen are not being added to (the GUI dims them).

No Qt here: the GUI hands over the events and, once a second, how late the captions are.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..events import (
    AppProblem,
    Captioning,
    CaptioningState,
    CaptionWatch,
    CaptureInterrupted,
    CaptureRecovered,
    CaptureStarted,
    CaptureStopped,
    DevicesChanged,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    EngineStopped,
    SourceSilence,
)

LATE_S = 5.0  # captions later than this are marked late...
LIVE_S = 3.0  # ...until they are back under this (no flapping around one value)
NAMED_S = 8.0  # after a switch of source, what is captioned now is named this long


@dataclass(frozen=True)
class OverlayStatus:
    text: str = ""  # "": live captions, nothing to say
    rows_current: bool = True  # False: the rows shown are from before (a pause, a stop, a restart)
    error: bool = False  # an engine error: screen readers are told at once
    topic: str = ""  # what it is about: screen readers hear a new topic, not every new figure
    # the app's notice (app.notices) says it aloud, with its fix (from the overlay while the main
    # window is hidden): the band only shows it, so a screen reader hears it once
    said_by_notice: bool = False
    window_says: bool = False  # a state the main window announces (its state or engine status)


class OverlayStatusTracker:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.captioning = Captioning.OFF
        self.stage = ""  # the engine's start-up stage while it starts
        self.engine_ready = False
        self.restarting = False
        self.failure: EngineFailed | None = None
        self.late_s: float | None = None  # set while captions are late
        self.had_session = False  # after a session, "off" is said as "stopped"
        self.no_captions: dict[str, CaptionWatch] = {}  # stream -> the watchdog's alarm, while on
        self.asked = ""  # "pausing" / "resuming": F6 pressed, the controller not there yet
        self.sound = SoundNews()
        self.switched = False  # another source chosen: the next session is named
        self.captured: dict[str, str] = {}  # this session's sources -> their devices
        self.named_until: float | None = None
        self.status = self._decide()

    def on_switch(self) -> None:
        """Another source was chosen: the next session's sources are named once it captions
        (a switch while captioning, or the next start; the box and the window say it too, but
        the overlay's reader looks here)."""
        self.switched = True

    def on_asked(self, what: str) -> OverlayStatus | None:
        """The person asked to pause or resume: said at once (flushing the last words takes
        seconds), until the controller's next state or its refusal."""
        self.asked = what
        return self._changed()

    def on_event(self, ev) -> OverlayStatus | None:
        """The new status if ``ev`` changed it, else None."""
        if isinstance(ev, CaptureStarted):
            self.captured[ev.source] = ev.description
        if self.sound.on_event(ev):
            return self._changed()
        if isinstance(ev, AppProblem):  # a pause refused (a file), a resume that could not open
            if not self.asked:
                return None
            self.asked = ""
        elif isinstance(ev, CaptioningState):
            self._on_state(ev.state)
        elif isinstance(ev, CaptionWatch):
            if ev.missing:
                self.no_captions[ev.stream_id] = ev
            else:
                self.no_captions.pop(ev.stream_id, None)
        elif isinstance(ev, EngineProgress):
            self.stage, self.failure = ev.stage, None
            self.engine_ready = False
        elif isinstance(ev, EngineReady):
            self.stage, self.failure = "", None
            self.engine_ready, self.restarting = True, False
        elif isinstance(ev, EngineRestarting):
            self.restarting, self.engine_ready, self.failure, self.stage = True, False, None, ""
        elif isinstance(ev, EngineFailed):
            self.failure, self.restarting, self.engine_ready = ev, False, False
        elif isinstance(ev, EngineStopped):
            self.engine_ready, self.restarting, self.stage = False, False, ""
        else:
            return None
        return self._changed()

    def _on_state(self, state: Captioning) -> None:
        self.asked = ""
        if state.active:
            self.had_session = True
        if state != Captioning.ON:
            self.late_s = None
            self.no_captions.clear()
            self.named_until = None
        if not state.capturing:
            self.sound.captures_gone()
        if state == Captioning.STARTING:
            self.captured.clear()
        if state == Captioning.ON and self.switched:  # kept until named: Up, Up ends on the
            self.named_until = self.clock() + NAMED_S  # last one chosen
        self.captioning = state

    def on_lateness(self, late_s: float | None) -> OverlayStatus | None:
        """How far behind the audio the newest captions are (None: unknown, e.g. silence with
        nothing waiting); the new status if that changed what is said."""
        if self.captioning != Captioning.ON:
            return None
        if self.named_until is not None and self.clock() >= self.named_until:
            self.switched, self.named_until = False, None  # read: the next start is not named
        if late_s is not None:
            late = late_s >= LATE_S or (self.late_s is not None and late_s >= LIVE_S)
            self.late_s = late_s if late else None
        return self._changed()  # also a source named long enough

    def _changed(self) -> OverlayStatus | None:
        new = self._decide()
        if new == self.status:
            return None
        self.status = new
        return new

    def _stage(self) -> str:
        return f" — {self.stage}" if self.stage else ""

    def _decide(self) -> OverlayStatus:
        c = self.captioning
        if self.failure is not None:
            fix = f" — {self.failure.fix}" if self.failure.fix else ""
            return OverlayStatus(f"Engine error: {self.failure.message}{fix}", rows_current=False,
                                 error=True, topic="error")
        if self.asked == "pausing":
            return OverlayStatus("Pausing — the last words follow", topic="pausing",
                                 window_says=True)
        if self.asked == "resuming":
            return OverlayStatus("Resuming…", rows_current=False, topic="resuming",
                                 window_says=True)
        if c == Captioning.PAUSED:
            return OverlayStatus("Paused — nothing is being captioned", rows_current=False,
                                 topic="paused", window_says=True)
        if self.restarting or c == Captioning.RESTARTING:
            # audio is held only while a session captures it
            then = "audio is kept, captions follow" if c.capturing else "not captioning"
            return OverlayStatus(f"Engine restarting{self._stage()} — {then}", rows_current=False,
                                 topic="restarting",
                                 window_says=True)  # the engine status, with the reason
        if c == Captioning.STARTING:
            return OverlayStatus(f"Starting captioning{self._stage()}", topic="starting",
                                 window_says=True)
        if c == Captioning.WAITING and (no_audio := self.sound.no_audio()):
            return OverlayStatus(f"Waiting for the engine; {no_audio}", topic="no audio",
                                 said_by_notice=True)
        if c == Captioning.WAITING:
            return OverlayStatus(f"Waiting for the engine{self._stage()} — audio is kept",
                                 topic="waiting",
                                 window_says=True)
        if c == Captioning.STOPPING:
            return OverlayStatus("Stopping — the last words follow", topic="stopping",
                                 window_says=True)
        if c == Captioning.ON:
            return self._on()
        # not captioning
        if not self.engine_ready and self.stage:
            engine = f"Engine starting{self._stage()}"
            return OverlayStatus(("Stopped. " if self.had_session else "") + engine,
                                 rows_current=not self.had_session, topic="engine starting")
        if self.had_session:
            return OverlayStatus("Stopped — not captioning", rows_current=False, topic="stopped",
                                 window_says=True)
        return OverlayStatus("Not captioning", topic="off", window_says=True)

    def _on(self) -> OverlayStatus:
        """While captioning: no audio, then no captions, no sound, late; else nothing to say."""
        if no_audio := self.sound.no_audio():  # nothing to caption: worse than anything below
            return OverlayStatus(no_audio[:1].upper() + no_audio[1:], topic="no audio",
                                 said_by_notice=True)
        if self.no_captions:  # before lateness: absence is the worse news
            alarm = next(reversed(self.no_captions.values()))
            return OverlayStatus(alarm.message[:1].upper() + alarm.message[1:],
                                 topic="no captions", said_by_notice=True)
        if silent := self.sound.silence():
            return OverlayStatus(silent, topic="no sound", said_by_notice=True)
        if self.late_s is not None:
            return OverlayStatus(f"Catching up — {self.late_s:.0f} s behind", topic="late")
        if self.named_until is not None and self.captured:
            named = "; ".join(f"{source}: {device}" for source, device in self.captured.items())
            return OverlayStatus(f"Now captioning {named}", topic="source", said_by_notice=True)
        return OverlayStatus()


class SoundNews:
    """What the captures said while they run: the sound server gone, a capture without audio
    (reconnecting), a source with no sound for long (``SourceSilence``)."""

    def __init__(self) -> None:
        self.server_down = False
        self.interrupted: dict[str, str] = {}  # source -> why no audio arrives
        self.silent: dict[str, SourceSilence] = {}

    def on_event(self, ev) -> bool:
        """True if ``ev`` was the captures' news (the status may change)."""
        if isinstance(ev, DevicesChanged):
            self.server_down = not ev.server_up
        elif isinstance(ev, CaptureInterrupted):
            self.interrupted[ev.source] = f"{ev.source}: no audio — reconnecting"  # the notice says why
        elif isinstance(ev, CaptureRecovered | CaptureStarted | CaptureStopped):
            self.interrupted.pop(ev.source, None)
        elif isinstance(ev, SourceSilence):
            self.silent.pop(ev.source, None)
            if ev.silent:
                self.silent[ev.source] = ev
        else:
            return False
        return True

    def captures_gone(self) -> None:
        """Captioning stopped or paused: the captures' news goes with them (the server's stays)."""
        self.interrupted.clear()
        self.silent.clear()

    def no_audio(self) -> str:
        """Why no audio arrives now, short enough for the band's one line ("" while it does)."""
        if self.server_down:
            return "no audio — sound server not running"
        return next(reversed(self.interrupted.values()), "")

    def silence(self) -> str:
        """The newest source with no sound for long, and what to check, short enough for the
        band's one line ("" while none); the window's notice has the whole fix."""
        ev = next(reversed(self.silent.values()), None)
        if ev is None:
            return ""
        hint = f" — {ev.hint}" if ev.hint else ""
        return f"{ev.source}: no sound for {ev.silent_s:.0f} s{hint}"
