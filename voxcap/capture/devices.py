"""Capture devices as a person knows them, from the sound server's own API.

On Linux that is PulseAudio, or PipeWire through its PulseAudio service (pipewire-pulse), reached
with libpulse through ``pulsectl``: it lists sinks/sources/monitors with their descriptions and
reports their coming and going. PortAudio cannot: Debian's PortAudio has no PulseAudio host API, so
it only sees the ALSA ``pulse``/``default`` devices, and neither lists monitors by name nor
reports a device's removal (the server then moves the stream to its fallback, silently).

Elsewhere (Windows, macOS) only PortAudio's own input devices are listed: microphones, and
loopback devices the user installed (e.g. BlackHole), which can be chosen by name.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ..errors import CaptureError
from ..events import DevicesChanged

NO_SERVER_FIX = ("start the sound server (PipeWire: `systemctl --user start pipewire-pulse`; PulseAudio: "
                 "`pulseaudio --start`), or point PULSE_SERVER at a running one")


@dataclass(frozen=True)
class DeviceInfo:
    """A device audio can be captured from."""

    name: str  # the sound server's (or PortAudio's) name; stable across replugs
    description: str  # what a person recognises: "Built-in Audio Analog Stereo", "Monitor of ..."
    kind: str  # "input" (a microphone, line-in...) or "monitor" (what an output device plays)
    is_default: bool  # what "mic" (inputs) or "system" (monitors) captures now
    rate: int = 0  # native sample rate
    channels: int = 0
    monitor_of: str = ""  # monitors: description of the output device
    index: int = -1  # the server's index (PortAudio's device index without a sound server)

    @property
    def is_monitor(self) -> bool:
        return self.kind == "monitor"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OutputInfo:
    name: str
    description: str
    monitor: str  # name of its monitor source
    index: int = -1


@dataclass(frozen=True)
class ServerState:
    """One consistent look at the sound server."""

    devices: tuple[DeviceInfo, ...]
    outputs: tuple[OutputInfo, ...]
    default_sink: str
    default_source: str
    server: str = ""

    def device(self, name: str) -> DeviceInfo | None:
        return next((d for d in self.devices if d.name == name), None)

    def system_device(self) -> DeviceInfo | None:
        """The monitor of the default output ("system audio")."""
        return next((d for d in self.devices if d.is_monitor and d.is_default), None)

    def mic_device(self) -> DeviceInfo | None:
        """The default microphone: the server's default source unless that is a monitor, else the
        first input."""
        return next((d for d in self.devices if d.kind == "input" and d.is_default), None)


def uses_sound_server() -> bool:
    """True where devices come from PulseAudio/PipeWire (Linux), False where from PortAudio."""
    return sys.platform.startswith("linux")


def _pulsectl():
    try:
        import pulsectl
    except (ImportError, OSError) as exc:  # OSError: libpulse.so.0 itself is missing
        raise CaptureError(f"Cannot talk to the sound server: {exc}",
                           "install libpulse (Debian/Ubuntu: `apt install libpulse0`) and "
                           "`pip install 'voxcap[audio]'`") from None
    return pulsectl


class SoundServer:
    """A libpulse connection to PulseAudio or pipewire-pulse. Not thread-safe: one per thread."""

    def __init__(self, client_name: str = "voxcap") -> None:
        pulsectl = _pulsectl()
        self._mod = pulsectl
        self._pulse = pulsectl.Pulse(client_name, connect=False)
        self._events: list = []
        self._listening = False
        try:
            # (no timeout: pulsectl 24 then always waits it out; a dead server fails at once)
            self._pulse.connect(autospawn=False, wait=False)
        except Exception as exc:  # noqa: BLE001 (pulsectl.PulseError and friends: all mean "no server")
            self._pulse.close()
            raise CaptureError(f"No sound server is running ({_server_hint()}): {exc}",
                               NO_SERVER_FIX) from None
        self._pulse.event_mask_set("source", "sink", "server", "source_output")
        self._pulse.event_callback_set(self._on_event)

    # ---------------------------------------------------------------------- state ----
    def state(self) -> ServerState:
        p = self._pulse
        info = p.server_info()
        sinks = p.sink_list()
        sources = p.source_list()
        sink_by_index = {s.index: s for s in sinks}
        default_sink = info.default_sink_name or ""
        default_source = info.default_source_name or ""
        monitors = {s.name for s in sources if s.monitor_of_sink in sink_by_index}
        inputs = [s.name for s in sources if s.name not in monitors]
        default_mic = default_source if default_source in inputs else (inputs[0] if inputs else "")
        devices = []
        for s in sources:
            sink = sink_by_index.get(s.monitor_of_sink)
            monitor = sink is not None
            devices.append(DeviceInfo(
                name=s.name, description=s.description or s.name,
                kind="monitor" if monitor else "input",
                is_default=(sink.name == default_sink) if sink is not None else (s.name == default_mic),
                rate=int(s.sample_spec.rate), channels=int(s.channel_count),
                monitor_of=(sink.description or sink.name) if sink is not None else "",
                index=int(s.index)))
        outputs = tuple(OutputInfo(s.name, s.description or s.name, s.monitor_source_name, int(s.index))
                        for s in sinks)
        server = f"{info.server_name} {info.server_version}".strip()
        return ServerState(tuple(devices), outputs, default_sink, default_source, server)

    def streams_tagged(self, key: str, value: str) -> list[tuple[int, int]]:
        """(source-output index, source index) of the capture streams whose properties have
        ``key=value`` (how voxcap finds its own streams on the server)."""
        return [(int(so.index), int(so.source)) for so in self._pulse.source_output_list()
                if so.proplist.get(key) == value]

    def move_stream(self, stream_index: int, source_index: int) -> None:
        self._pulse.source_output_move(stream_index, source_index)

    # --------------------------------------------------------------------- events ----
    def _on_event(self, ev) -> None:
        self._events.append(ev)
        if self._listening:  # events also arrive during queries; only stop our own wait
            raise self._mod.PulseLoopStop

    def wait_event(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a device/default/stream change; True if one came.
        Raises CaptureError when the server goes away."""
        if not self._events:
            self._listening = True
            try:
                self._pulse.event_listen(timeout=timeout)
            except self._mod.PulseDisconnected:
                raise CaptureError("The sound server went away.", NO_SERVER_FIX) from None
            finally:
                self._listening = False
        came = bool(self._events)
        self._events.clear()
        return came

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a dead connection may raise
            self._pulse.close()

    def __enter__(self) -> SoundServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _server_hint() -> str:
    import os

    server = os.environ.get("PULSE_SERVER")
    return f"PULSE_SERVER={server}" if server else "PulseAudio/PipeWire"


def _portaudio_devices() -> list[DeviceInfo]:
    sd = import_sounddevice()
    try:
        default_in = sd.default.device[0]
        devices = sd.query_devices()
    except Exception as exc:  # noqa: BLE001 (PortAudioError and whatever the host API raises)
        raise CaptureError(f"PortAudio cannot list audio devices: {exc}",
                           "check that a sound device is connected and enabled") from None
    out = []
    for i, d in enumerate(devices):
        if d["max_input_channels"] <= 0:
            continue
        out.append(DeviceInfo(name=d["name"], description=d["name"], kind="input",
                              is_default=(i == default_in), rate=int(d["default_samplerate"]),
                              channels=int(d["max_input_channels"]), index=i))
    return out


def import_sounddevice():
    try:
        import sounddevice
    except (ImportError, OSError) as exc:  # OSError: the PortAudio library is missing
        raise CaptureError(f"PortAudio is not available: {exc}",
                           "install PortAudio (Debian/Ubuntu: `apt install libportaudio2`) and "
                           "`pip install 'voxcap[audio]'`") from None
    return sounddevice


def server_state() -> ServerState:
    """The devices to capture from now; raises CaptureError (no server, missing libraries)."""
    if uses_sound_server():
        with SoundServer("voxcap-devices") as server:
            return server.state()
    devices = tuple(_portaudio_devices())
    default = next((d.name for d in devices if d.is_default), "")
    return ServerState(devices, (), "", default, "PortAudio")


def list_devices() -> list[DeviceInfo]:
    return list(server_state().devices)


class DeviceWatcher:
    """Publishes ``DevicesChanged`` whenever the sound server's devices or defaults change, and
    when the server goes away or comes back. A thread with its own connection; for UIs.
    """

    def __init__(self, on_event: Callable[[object], None], retry_s: float = 1.0) -> None:
        self._on_event = on_event
        self._retry_s = retry_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> DeviceWatcher:
        self._thread = threading.Thread(target=self._run, name="voxcap-device-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 3.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        last: tuple | None = None
        server: SoundServer | None = None
        while not self._stop.is_set():
            try:
                if server is None:
                    server = SoundServer("voxcap-watch")
                state = server.state()
                if (state.devices, True) != last:
                    last = (state.devices, True)
                    self._on_event(DevicesChanged(state.devices, True))
                server.wait_event(0.5)
            except CaptureError:
                if server is not None:
                    server.close()
                    server = None
                if last != ((), False):
                    last = ((), False)
                    self._on_event(DevicesChanged((), False))
                self._stop.wait(self._retry_s)
            except Exception:  # noqa: BLE001 (a query raced with a removal: look again)
                self._stop.wait(0.1)
        if server is not None:
            server.close()
