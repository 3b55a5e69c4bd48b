"""Audio capture (no Qt): devices from the sound server, sources by name, and ``Capture``, which
delivers 16 kHz mono blocks through device changes, stalls and sound-server restarts."""

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
