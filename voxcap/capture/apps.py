"""Applications playing sound, from the sound server's playback streams ("sink inputs").

An application is known by its name (``application.name``: "Firefox", "Zoom"), not by a stream
index: a call app or a browser ends and reopens its stream whenever a call or a video restarts,
and each new stream gets a new index. One application may play several streams at once (tabs).

Works the same on PulseAudio and on PipeWire's PulseAudio server (both list the same stream
properties). Streams the sound server makes itself (loopbacks, echo cancellers, remaps) and
voxcap's own are left out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

INVALID_INDEX = 0xFFFFFFFF


@dataclass(frozen=True)
class AppStream:
    """One playback stream of an application."""

    index: int  # the sink input's index (changes when the app reopens its stream)
    sink: int  # index of the output device it plays on
    media: str  # what it plays: a tab title, "Playback", the file name...
    corked: bool  # paused by the application
    rate: int = 48000
    channels: int = 2


@dataclass(frozen=True)
class AppInfo:
    """An application playing (or paused in) sound now."""

    name: str  # application.name: the identity a choice follows
    binary: str = ""  # application.process.binary
    icon: str = ""  # application.icon_name (a freedesktop icon name)
    streams: tuple[AppStream, ...] = ()

    @property
    def media(self) -> str:
        """What it plays, for people: the titles of its streams."""
        seen: list[str] = []
        for s in self.streams:
            if s.media and s.media not in seen and s.media.casefold() != self.name.casefold():
                seen.append(s.media)
        return "; ".join(seen)

    @property
    def title(self) -> str:
        """"Firefox — <tab title>", or just the name."""
        return f"{self.name} — {self.media}" if self.media else self.name

    @property
    def playing(self) -> bool:
        return any(not s.corked for s in self.streams)

    def best_stream(self) -> AppStream | None:
        """The stream to capture: the newest one that is not paused, else the newest."""
        if not self.streams:
            return None
        live = [s for s in self.streams if not s.corked] or list(self.streams)
        return max(live, key=lambda s: s.index)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(title=self.title, media=self.media, playing=self.playing)
        return d


def _is_server_made(si) -> bool:
    """A stream a module made (loopback, echo-cancel, remap), not an application's: it has no
    client on PulseAudio (``owner_module`` is no help: client streams belong to the protocol
    module), and module properties on PipeWire."""
    props = si.proplist
    if si.client in (None, INVALID_INDEX, -1):
        return True
    return "pulse.module.id" in props or props.get("media.role") == "filter" \
        or props.get("node.virtual") == "true" and "application.name" not in props


def app_name_of(si) -> str:
    props = si.proplist
    return (props.get("application.name") or props.get("application.process.binary") or "").strip()


def list_apps(pulse, own_tag: str = "voxcap.capture") -> list[AppInfo]:
    """Applications with at least one playback stream, from a pulsectl connection, sorted by
    name. ``own_tag``: a property that marks voxcap's own streams (left out)."""
    by_name: dict[str, list] = {}
    for si in pulse.sink_input_list():
        if _is_server_made(si) or own_tag in si.proplist:
            continue
        name = app_name_of(si)
        if not name:
            continue
        by_name.setdefault(name, []).append(si)
    apps = []
    for name, items in by_name.items():
        props = items[0].proplist
        streams = tuple(AppStream(int(si.index), int(si.sink), si.proplist.get("media.name", "") or "",
                                  bool(si.corked), int(si.sample_spec.rate), int(si.channel_count))
                        for si in sorted(items, key=lambda s: s.index))
        apps.append(AppInfo(name, props.get("application.process.binary", ""),
                            props.get("application.icon_name", ""), streams))
    return sorted(apps, key=lambda a: a.name.casefold())


def find_app(name: str, apps: list[AppInfo]) -> AppInfo | None:
    """The application called ``name`` (its name, its program's name, or what it plays;
    case-insensitive)."""
    want = name.strip().casefold()
    for key in (lambda a: a.name, lambda a: a.binary, lambda a: a.title):
        hit = next((a for a in apps if key(a).casefold() == want), None)
        if hit is not None:
            return hit
    return None


def apps_now() -> list[AppInfo]:
    """Applications playing on the sound server now ([] where there is none, e.g. no server:
    the device listing reports that itself)."""
    import logging

    from ..errors import CaptureError
    from .devices import SoundServer, uses_sound_server
    from .stream import TAG_KEY

    if not uses_sound_server():
        return []
    try:
        with SoundServer("voxcap-apps") as server:
            return list_apps(server._pulse, TAG_KEY)  # same package
    except CaptureError:
        logging.getLogger(__name__).warning("cannot list applications", exc_info=True)
        return []


def format_apps(apps: list[AppInfo]) -> str:
    """The "Applications" part of ``voxcap devices``."""
    lines = ["\nApplications playing sound (only their sound: --source \"app:NAME\"; with the "
             "microphone: \"both:NAME\"):"]
    for a in apps:
        state = "" if a.playing else "  (paused)"
        lines.append(f"    {a.title}{state}  [app:{a.name}]")
    if not apps:
        lines.append("    (none playing now; \"app:NAME\" waits for NAME to play)")
    return "\n".join(lines) + "\n"


class AppWatcher:
    """Publishes ``AppsChanged`` whenever the applications playing sound (or what they play)
    change. A thread with its own connection, for UIs; quiet while there is no server (the
    device watcher reports that)."""

    def __init__(self, on_event, poll_s: float = 1.0) -> None:
        import threading

        self._on_event = on_event
        self._poll_s = poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="voxcap-app-watch", daemon=True)

    def start(self) -> AppWatcher:
        self._thread.start()
        return self

    def stop(self, timeout: float = 3.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        import logging

        from ..events import AppsChanged
        from .devices import SoundServer, uses_sound_server
        from .stream import TAG_KEY

        log = logging.getLogger(__name__)
        if not uses_sound_server():
            return
        last = None
        server = None
        while not self._stop.is_set():
            try:
                if server is None:
                    server = SoundServer("voxcap-app-watch")
                apps = tuple(list_apps(server._pulse, TAG_KEY))  # same package
                if apps != last:
                    last = apps
                    self._on_event(AppsChanged(apps))
            except Exception:  # no server, or it went away mid-query
                if server is not None or last != ():  # once per outage, not every second
                    log.warning("listing applications failed", exc_info=True)
                    last = ()
                if server is not None:
                    server.close()
                    server = None
            self._stop.wait(self._poll_s)  # streams come and go often: a cheap poll, no events
        if server is not None:
            server.close()


class _Watchers:
    def __init__(self, *watchers) -> None:
        self.watchers = watchers

    def stop(self, timeout: float = 3.0) -> None:
        for w in self.watchers:
            w.stop(timeout)


def watch_devices_and_apps(on_event) -> _Watchers:
    """``DevicesChanged`` and ``AppsChanged`` to ``on_event`` until ``stop()``."""
    from .devices import DeviceWatcher

    return _Watchers(DeviceWatcher(on_event).start(), AppWatcher(on_event).start())
