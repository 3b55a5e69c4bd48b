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

from .capture import Capture, CaptureStats, capture_sources
from .devices import DeviceInfo, DeviceWatcher, ServerState, list_devices, server_state
from .sources import SourceSpec, parse_sources

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
