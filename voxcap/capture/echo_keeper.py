"""Echo cancelling kept for one capture of the microphone, and said truthfully.

The sound server's canceller (``echo.EchoCanceller``) does not outlive the server, nor the
output it listens to: a restart or an unplugged speaker unloads it, and the capture falls back
to the microphone as it is. The keeper builds it again whenever that happens, and whenever the
server's default output is no longer the one it listens to (the speakers came back, headphones
went in): the capture then moves onto the new canceller.

What the capture reads is said in words at every moment (``words``, which the capture's events
carry and the meter shows): "<mic> (echo cancelled by voxcap)" only while a canceller is read,
"<mic> (echo cancelling lost — rebuilding)" from the moment it is known gone until it is built
again, "<mic> (not echo cancelled: <why>)" when it cannot be. A rebuilt canceller's own notices
are held until the capture reads it (``say``), so "echo cancellation on" never comes first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from .devices import DeviceInfo, ServerState
from .echo import PREFIX, EchoCanceller
from .sources import Resolution, SourceSpec, resolve
from .watchdog import Backoff

log = logging.getLogger(__name__)

ON, LOST, OFF = "on", "lost", "off"
LOST_WORDS = "echo cancelling lost — rebuilding"


class EchoKeeper:
    """``notice(reason, message, words)``: one line for the user, and what is read now."""

    def __init__(self, spec: SourceSpec, label: str, notice: Callable[[str, str, str], None]) -> None:
        self.spec, self.label = spec, label
        self._notice = notice
        self.canceller: EchoCanceller | None = None
        self.state = OFF
        self.why = ""  # why there is no canceller (OFF), in a few words
        self.mic: DeviceInfo | None = None  # the microphone as it is
        self.device: DeviceInfo | None = None  # the canceller's source (ON)
        self.built_for: str | None = None  # the default output it was built for (None: never built)
        self._retired: EchoCanceller | None = None  # the one replaced, stopped once the capture moved
        self._held: list[tuple[str, str]] = []
        self._backoff = Backoff(0.5, 5.0)
        self._retry_at = 0.0

    # --------------------------------------------------------------------- words ----
    def words(self, dev: DeviceInfo | None) -> str:
        """``dev`` (the device the capture reads) as the meter says it."""
        if dev is None:
            return ""
        if self.state == ON and self.device is not None and dev.name == self.device.name:
            return dev.description  # "<mic> (echo cancelled by voxcap)", its own description
        if dev.name.startswith(PREFIX):  # a canceller being replaced: still true
            return dev.description
        if self.state == LOST:
            return f"{dev.description} ({LOST_WORDS})"
        return f"{dev.description} (not echo cancelled: {self.why})" if self.why else dev.description

    # ------------------------------------------------------------------ building ----
    def build(self, mic: DeviceInfo, state: Callable[[], ServerState]) -> DeviceInfo:
        """A canceller for ``mic``: the device to read (its source, or ``mic`` when there can be
        none: ``why`` says why). Raises CaptureError when there is no sound server. Its notices
        wait for ``say``."""
        self._retired, self.canceller, self.device = self.canceller, None, None
        self.mic = mic
        ec = EchoCanceller(mic.name, self.spec.echo_ref, self.spec.echo,
                           lambda reason, msg: self._held.append((reason, msg)), self.label)
        try:
            source = ec.start()
            self.built_for = ec.master
            dev = state().device(source) if source else None
        except Exception:  # no server, or it went away meanwhile: built again once it can be
            ec.stop()
            self.canceller, self._retired = self._retired, None  # for ``lost`` to stop
            if self.state == ON:
                self.lost("the sound server went away")
            elif self.built_for is not None:
                self.state = LOST
            raise
        if source is None or dev is None:
            if source is not None:
                ec.stop()
                self._held.append(("echo failed", f"{self.label}: echo cancellation could not start "
                                   "(its source did not appear); the microphone is captured as it is"))
            self.state, self.why = OFF, ec.why_off or "its source did not appear"
            return mic
        self.canceller, self.device, self.state, self.why = ec, dev, ON, ""
        self._backoff.reset()
        return dev

    def say(self, dev: DeviceInfo | None) -> None:
        """The capture reads ``dev`` now: the replaced canceller goes, held notices go out."""
        retired, self._retired = self._retired, None
        if retired is not None:
            retired.stop()
        held, self._held = self._held, []
        for reason, message in held:
            self._notice(reason, message, self.words(dev))

    # ------------------------------------------------------------------- keeping ----
    def resolve(self, state: ServerState) -> Resolution | None:
        """The canceller's source while the server has it; None: read the microphone."""
        if self.state != ON or self.device is None:
            return None
        dev = state.device(self.device.name)
        if dev is not None:
            return Resolution(dev)
        self.lost("its microphone or its output went away")
        return None

    def lost(self, why: str) -> None:
        """The canceller is gone (``why``); it is rebuilt once the server can."""
        if self.state != ON:
            return
        ec, self.canceller, self.device = self.canceller, None, None
        self.state = LOST
        self._retry_at = 0.0
        log.warning("%s: echo cancelling lost (%s); rebuilding", self.label, why)
        mic = self.mic.description if self.mic else "the microphone"
        self._notice("echo lost", f"{self.label}: {LOST_WORDS} ({why}); meanwhile the microphone is "
                     "captured as it is, so on speakers it may repeat the other side",
                     f"{mic} ({LOST_WORDS})")
        if ec is not None:
            ec.stop()

    def due(self, state: ServerState | None, now: float) -> bool:
        """Whether to build again now: lost, or the server's default output is another one."""
        if now < self._retry_at:
            return False
        if self.state == LOST:
            return True
        if state is None or self.built_for is None:
            return False
        default = state.default_sink
        return not default.startswith(PREFIX) and default != self.built_for

    def failed(self) -> None:
        """A rebuild could not run (the server went away meanwhile): try again later."""
        self._retry_at = time.monotonic() + self._backoff.next_delay()

    def microphone(self, state: ServerState, kind_hint: str) -> DeviceInfo | None:
        """The microphone as it is, now (the one built on while it is still there)."""
        if self.mic is not None:
            dev = state.device(self.mic.name)
            if dev is not None:
                return dev
        res = resolve(self.spec, state, kind_hint)
        return res.device if res is not None and not res.device.name.startswith(PREFIX) else None

    def stop(self) -> None:
        ec, self.canceller = self.canceller, None
        retired, self._retired = self._retired, None
        for one in (ec, retired):
            if one is not None:
                one.stop()
