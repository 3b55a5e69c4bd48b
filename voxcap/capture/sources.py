"""What to capture, by name: "system", "mic", "both", or a device's name, resolved against the
sound server's current devices.

"system" is the monitor of the default output and "mic" the default input; both follow the
server's defaults as they change. A named device is the user's choice: while it is gone the
capture falls back to the same kind of device (a monitor to "system", an input to "mic") and
returns to the named one when it comes back.

"app:NAME" is one application's sound (``apps``, ``app_stream``); a plain name that is no
device but an application playing now means the same. "both:NAME" pairs an application ("Them")
with the microphone ("You"). In a pair the microphone's ``echo`` setting (on/off/auto) asks for
the sound server's echo canceller referenced to what "Them" captures (``echo``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..errors import CaptureError
from ..setting_refs import ref
from .app_stream import app_device
from .devices import DeviceInfo, ServerState, uses_sound_server
from .source_names import ECHO_MODES, SOURCE_HELP

log = logging.getLogger(__name__)

SYSTEM, MIC, DEVICE, APP = "system", "mic", "device", "app"
LABELS = {SYSTEM: "Them", MIC: "You"}
_ALIASES = {"system": SYSTEM, "system audio": SYSTEM, "speakers": SYSTEM, "mic": MIC,
            "microphone": MIC}


@dataclass(frozen=True)
class SourceSpec:
    """One capture: ``kind`` is system, mic or device (``name`` is what the user typed)."""

    kind: str
    name: str = ""
    label: str = ""  # the caption stream's label: "Them" (system), "You" (mic), or the name
    echo_ref: str = ""  # mic in a pair: what the other half captures ("system", "app:NAME")
    echo: str = "off"  # mic in a pair: echo cancellation "auto", "on" or "off"

    def __str__(self) -> str:
        if self.kind == APP:
            return f"app:{self.name}"
        return self.name if self.kind == DEVICE else self.kind


@dataclass(frozen=True)
class Resolution:
    device: DeviceInfo
    fallback: bool = False  # the chosen device is missing; this is the same kind's default
    missing: str = ""  # description/name of the missing chosen device


def parse_sources(text: str, echo: str = "auto") -> list[SourceSpec]:
    """``--source`` to captures: "both" gives system ("Them") then mic ("You"), "both:NAME" the
    application NAME ("Them") then mic ("You"); ``echo`` goes to the mic of a pair."""
    t = (text or "").strip()
    if not t:
        raise CaptureError("No source given.", ref("use_source", SOURCE_HELP))
    if echo not in ECHO_MODES:
        raise CaptureError(f"Echo cancellation must be one of {', '.join(ECHO_MODES)}, not {echo!r}.",
                           "use auto (on unless the output is headphones), on or off")
    key = t.lower()
    if key == "both":
        return [SourceSpec(SYSTEM, label=LABELS[SYSTEM]),
                SourceSpec(MIC, label=LABELS[MIC], echo_ref=SYSTEM, echo=echo)]
    if key.startswith(("app:", "both:")):
        both, name = key.startswith("both:"), t.split(":", 1)[1].strip()
        if not name:
            raise CaptureError(f"No application named in {t!r}.",
                               "give its name as `voxcap devices` lists it, e.g. app:Firefox")
        them = SourceSpec(APP, name=name, label=LABELS[SYSTEM] if both else name)
        if not both:
            return [them]
        return [them, SourceSpec(MIC, label=LABELS[MIC], echo_ref=str(them), echo=echo)]
    if key in _ALIASES:
        kind = _ALIASES[key]
        return [SourceSpec(kind, label=LABELS[kind])]
    return [SourceSpec(DEVICE, name=t, label=t)]


def find_device(name: str, state: ServerState) -> DeviceInfo | None:
    """The device called ``name``: its description or server name (case-insensitive), or an
    output device's description/name (meaning its monitor), or a unique partial description.
    Raises CaptureError when a partial name matches several devices."""
    want = name.strip().casefold()
    for d in state.devices:
        if want in (d.description.casefold(), d.name.casefold()):
            return d
    for o in state.outputs:  # "Built-in Audio Analog Stereo" (an output): what it plays
        if want in (o.description.casefold(), o.name.casefold()):
            mon = state.device(o.monitor)
            if mon is not None:
                return mon
    partial = [d for d in state.devices if want in d.description.casefold()]
    if len(partial) == 1:
        return partial[0]
    if len(partial) > 1:
        raise CaptureError(f"Device name {name!r} matches several devices: "
                           + "; ".join(repr(d.description) for d in partial),
                           "give the full name as `voxcap devices` lists it")
    return None


def describe_devices(state: ServerState) -> str:
    if not state.devices:
        return "(no capture devices at all)"
    return "; ".join(f"{d.description!r}" + (" [default]" if d.is_default else "")
                     for d in state.devices)


def resolve_initial(spec: SourceSpec, state: ServerState) -> tuple[SourceSpec, DeviceInfo]:
    """Resolve a source at start: unknown names and missing devices are errors (with the list
    of what exists). Returns the spec pinned to the device's stable name, and the device."""
    if spec.kind == APP:
        return spec, app_device(spec.name)
    if spec.kind == DEVICE:
        dev = find_device(spec.name, state)
        if dev is None:
            app = _playing_app(spec.name) if uses_sound_server() else None
            if app is not None:  # not a device, but an application playing now
                return SourceSpec(APP, name=app.name, label=app.name), app_device(app.name)
            raise CaptureError(f"No capture device called {spec.name!r} (and no application of that "
                               f"name plays sound now). Devices: "
                               f"{describe_devices(state)}",
                               "pick one of these names (see `voxcap devices`), use "
                               '"app:NAME" for an application that is not playing yet, or '
                               f"{ref('use_source', 'system|mic|both')}")
        return SourceSpec(DEVICE, name=dev.name, label=spec.label or dev.description), dev
    res = resolve(spec, state)
    if res is None:
        if spec.kind == SYSTEM:
            if not uses_sound_server():
                raise CaptureError(
                    "System audio capture needs a loopback device on this system.",
                    f"capture the microphone ({ref('source', 'mic')}), or install a loopback device (macOS: "
                    f"BlackHole; Windows: enable 'Stereo Mix') and {ref('pass_source')}")
            raise CaptureError("There is no output device, so no system audio to capture. Devices: "
                               f"{describe_devices(state)}", "connect or enable an output device")
        raise CaptureError(f"There is no microphone or other input device. Devices: "
                           f"{describe_devices(state)}", "connect or enable a microphone")
    return spec, res.device


def _playing_app(name: str):
    """The application called ``name`` among those playing now (None if none or no server)."""
    from .apps import find_app
    from .devices import SoundServer

    try:
        with SoundServer("voxcap-apps") as server:
            return find_app(name, list_apps_of(server))
    except CaptureError:
        log.info("cannot list the applications playing audio", exc_info=True)
        return None


def list_apps_of(server) -> list:
    """Applications playing on ``server`` (a ``devices.SoundServer``)."""
    from .apps import list_apps
    from .stream import TAG_KEY

    return list_apps(server._pulse, TAG_KEY)  # same package; one connection


def resolve(spec: SourceSpec, state: ServerState, kind_hint: str = "") -> Resolution | None:
    """The device to read now for ``spec`` (None when there is none of that kind at all).

    For a named device that is gone, the default of its kind (``kind_hint``: "monitor" or
    "input", remembered from when it was seen) with ``fallback=True``.
    """
    if spec.kind == APP:
        return Resolution(app_device(spec.name))
    if spec.kind == SYSTEM:
        dev = state.system_device()
        return Resolution(dev) if dev else None
    if spec.kind == MIC:
        dev = state.mic_device()
        return Resolution(dev) if dev else None
    dev = state.device(spec.name)
    if dev is not None:
        return Resolution(dev)
    fallback = state.system_device() if kind_hint == "monitor" else state.mic_device()
    return Resolution(fallback, fallback=True, missing=spec.label or spec.name) if fallback else None
