"""Audio capture (no Qt): devices from the sound server, sources by name, and ``Capture``, which
delivers 16 kHz mono float32 blocks through device changes, stalls and sound-server restarts.

    state = server_state()                       # devices (DeviceInfo), defaults; CaptureError if no server
    cap = Capture("system", on_block, on_event)  # or "mic", or a device's name; "both" = two Captures
    cap.start(); ...; stats = cap.stop()         # on_block(AudioBlock) on the capture's thread
    DeviceWatcher(on_event).start()              # DevicesChanged on every device/default change

Events (``voxcap.events``): CaptureStarted, CaptureInterrupted, CaptureRecovered,
CaptureDeviceChanged, CaptureLoss, CaptureStopped, DevicesChanged; each capture event carries a
one-line ``message``.
"""

from importlib import import_module

# Loaded on first use: the settings and `voxcap doctor` read sources.py's names (echo modes, the
# sources' help) in installs without numpy or PortAudio, which capture.py and devices.py need.
_WHERE = {
    "Capture": "capture", "CaptureStats": "capture", "capture_sources": "capture",
    "DeviceInfo": "devices", "DeviceWatcher": "devices", "ServerState": "devices",
    "list_devices": "devices", "server_state": "devices",
    "SourceSpec": "sources", "parse_sources": "sources",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)


__all__ = [
    "Capture",
    "CaptureStats",
    "DeviceInfo",
    "DeviceWatcher",
    "ServerState",
    "SourceSpec",
    "capture_sources",
    "list_devices",
    "parse_sources",
    "server_state",
]
