"""The sound server and devices: what can be captioned."""

from __future__ import annotations

import os

from .base import (
    FAIL,
    OK,
    REINSTALL,
    WARN,
    Check,
    Context,
)


def check_sound(ctx: Context, args) -> Check:
    title = "Sound server and devices"
    try:
        from ...capture.devices import import_sounddevice, server_state
        from ...errors import CaptureError
    except Exception as exc:  # noqa: BLE001 - numpy or pulsectl missing
        return Check("sound", title, FAIL, f"the capture layer cannot be loaded: {exc}", REINSTALL)
    try:
        state = server_state()
    except CaptureError as exc:
        return Check("sound", title, FAIL, exc.message, exc.fix)
    monitors = [d for d in state.devices if d.is_monitor]
    inputs = [d for d in state.devices if not d.is_monitor]
    system = state.system_device()
    mic = state.mic_device()
    details = {"server": state.server, "pulse_server": os.environ.get("PULSE_SERVER", ""),
               "monitors": [d.name for d in monitors], "inputs": [d.name for d in inputs],
               "system": system.name if system else None, "mic": mic.name if mic else None}
    try:
        sd = import_sounddevice()
        from ...capture.stream import _pulse_portaudio_device

        _pulse_portaudio_device(sd)
        details["portaudio"] = sd.get_portaudio_version()[1]
    except CaptureError as exc:
        return Check("sound", title, FAIL, exc.message, exc.fix, details)
    summary = (f"{state.server}: system audio from "
               f"{system.description if system else 'nothing'}, microphone "
               f"{mic.description if mic else 'none'} ({len(monitors)} outputs, {len(inputs)} "
               f"inputs); {details['portaudio']}")
    if system is None and mic is None:
        return Check("sound", title, FAIL, f"{state.server} has no device to capture from",
                     "connect or enable a sound card or headset (your desktop's sound settings)",
                     details)
    if system is None or mic is None:
        what = "system audio (no output device)" if system is None else "the microphone (none)"
        return Check("sound", title, WARN, f"{summary}; {what} cannot be captioned",
                     "connect or enable the device in your desktop's sound settings", details)
    return Check("sound", title, OK, summary, "", details)
