"""Settings of the remote engine (a vLLM server's /v1/realtime endpoint) and their validation.

No websockets or vLLM import here: the CLI and the GUI validate settings without either.
The API key is a secret: it is excluded from ``repr`` and never put into a message, an event
or a log record by voxcap (see ``voxcap.engine.remote.engine``); in a config file it lives in a file
only its owner can read (``save_api_key`` / ``load_api_key``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ...errors import ConfigError
from ...framing import STEP_MS
from ...netaddr import is_loopback_host
from ...setting_refs import ref
from ...settings_schema import same_setting, setting
from ..settings import InProcessSettings, validate_delay_ms

REALTIME_PATH = "/v1/realtime"
DEFAULT_MAX_BUFFER_S = 120.0


@dataclass(frozen=True)
class RemoteSettings:
    """How to reach the server and how much audio to hold for it.

    ``server_url``: the server's base address (``ws://host:8000``; ``http(s)://`` is accepted and
    means ``ws(s)://``), or the full ``.../v1/realtime`` address. ``server_model``: the name the server
    serves the model as (``--served-model-name``; by default the path it was started with);
    "" means the one model the server lists at /v1/models.
    ``max_buffer_s``: audio held per stream that the server has not transcribed yet (sent and
    in flight, or waiting to be sent while the server is behind or unreachable); beyond it the
    oldest is dropped and reported as a StreamGap. None: unbounded (files, where all the audio
    exists anyway). ``max_inflight_s``: audio sent ahead of the last text received; the rest
    waits on this side, where it can be bounded, replayed and reported.
    """

    server_url: str = setting(
        "", label="&Server", restarts_engine=True, flag="--server", metavar="URL",
        flag_help="the vLLM server, e.g. ws://gpu-box:8000 or wss://... (its /v1/realtime)")
    server_model: str = setting(
        "", label="Se&rver model", restarts_engine=True, flag="--server-model", metavar="NAME",
        flag_help="the model name the server serves (default: its only model)")
    api_key: str | None = field(default=None, repr=False)
    max_streams: int = 2
    # the server's model's; the protocol does not report it
    delay_ms: int = same_setting(InProcessSettings, "delay_ms")
    max_buffer_s: float | None = DEFAULT_MAX_BUFFER_S
    max_inflight_s: float = 4.0
    append_ms: int = STEP_MS  # audio per append message while keeping up (more when catching up)
    max_append_s: float = 1.0  # the most audio one append carries when catching up
    connect_timeout_s: float = 10.0
    reconnect_give_up_s: float | None = 300.0  # a stream fails after this long unreachable
    # start-up against a server that is not there (yet): retried with backoff this long, saying
    # "retrying in N s"; 0: fail at once (the CLI), None: until it answers (the GUI)
    start_retry_s: float | None = 0.0
    stall_timeout_s: float = 60.0  # audio in flight and no message for this long: reconnect

    # What the journal records as the model (it reads ``model_dir``).
    @property
    def model_dir(self) -> str:
        return f"{self.server_model} @ {self.display_url}"

    @property
    def realtime_url(self) -> str:
        return realtime_url(self.server_url)

    @property
    def display_url(self) -> str:
        """The server address as shown to people: no user info, query or fragment."""
        return display_url(self.server_url)

    def validated(self) -> RemoteSettings:
        url = normalize_url(self.server_url)
        model = (self.server_model or "").strip()  # "": the server's only model (its /v1/models)
        if self.api_key is not None and (not self.api_key.strip() or any(
                c in self.api_key for c in "\r\n")):
            raise ConfigError("The API key is empty or contains a line break.",
                              "store the key alone on one line")
        if not 1 <= self.max_streams <= 64:
            raise ConfigError(f"max streams {self.max_streams} is out of range.", "use 1 to 64")
        validate_delay_ms(self.delay_ms)
        if self.max_buffer_s is not None and self.max_buffer_s < 1:
            raise ConfigError("The remote audio buffer must hold at least 1 s.",
                              "e.g. 120 (seconds), or unbounded for files")
        if not 0.5 <= self.max_inflight_s <= 600:
            raise ConfigError("max_inflight_s must be between 0.5 and 600 s.", "e.g. 4")
        if not 10 <= self.append_ms <= 1000 or not 0.01 <= self.max_append_s <= 120:
            raise ConfigError("The append block size is out of range.",
                              "append_ms 10-1000, max_append_s 0.01-120")
        if self.connect_timeout_s <= 0 or self.stall_timeout_s <= 0:
            raise ConfigError("Timeouts must be positive.", "e.g. 10 s to connect")
        return replace(self, server_url=url, server_model=model)


def normalize_url(url: str) -> str:
    """``ws://`` or ``wss://`` address (``http(s)://`` mapped to it); ConfigError otherwise."""
    raw = (url or "").strip()
    fix = f"give the server's address, e.g. {ref('server_url', 'ws://gpu-box:8000')} (or wss:// over TLS)"
    if not raw:
        raise ConfigError("No server address for the remote engine.", fix)
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"The server address {display_url(raw)!r} is not a valid URL.",
                          fix) from None
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in ("ws", "wss") or not parts.hostname:
        raise ConfigError(f"The server address {display_url(raw)!r} is not a ws:// or wss:// URL.",
                          fix)
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))


def realtime_url(url: str) -> str:
    parts = urlsplit(normalize_url(url))
    path = parts.path.rstrip("/")
    if not path.endswith(REALTIME_PATH):
        path += REALTIME_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def models_url(url: str) -> str:
    """The server's /v1/models over HTTP(S), next to its /v1/realtime."""
    parts = urlsplit(realtime_url(url))
    base = parts.path[: -len(REALTIME_PATH)]
    scheme = "https" if parts.scheme == "wss" else "http"
    return urlunsplit((scheme, parts.netloc, base + "/v1/models", "", ""))


def display_url(url: str) -> str:
    """``scheme://host:port/path`` without credentials, query or fragment (safe to show/log)."""
    try:
        parts = urlsplit((url or "").strip())
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid address>"
    if not parts.scheme:
        return "<address without scheme>"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


# ------------------------------------------------------------------ the API key ----
def default_api_key_path() -> Path:
    """Where the GUI stores the server's API key (owner-only), and where the CLI looks for one."""
    from ... import paths

    return paths.config_dir() / "remote-api-key"


def local_server_key_path() -> Path:
    """The key ``voxcap serve`` made on this computer (``engine.server.key``): the one a
    server on this computer's loopback address asks for."""
    from ... import paths

    return paths.config_dir() / "serve-api-key"


def is_loopback(server_url: str) -> bool:
    """A server on this computer: ``localhost`` or a loopback address (netaddr's rule)."""
    try:
        host = urlsplit(normalize_url(server_url)).hostname or ""
    except ConfigError:
        return False
    return is_loopback_host(host)


def find_api_key(server_url: str) -> tuple[str | None, str]:
    """The key for ``server_url`` and where it comes from, said for people: the copy given to
    the app (``remote-api-key``), else for a server on this computer the key ``voxcap serve``
    made here (any key is sent only to a server this user runs: ``connection.check_peer``), else none. A
    key file others can read raises ConfigError (with its fix)."""
    given = default_api_key_path()
    if given.exists():
        return load_api_key(given), f"key: found in {given}"
    local = local_server_key_path()
    if is_loopback(server_url) and local.exists():
        return load_api_key(local), f"key: this computer's server key, found in {local}"
    return None, ("no key: the server will refuse the connection unless it was started without "
                  f"one; give its key (voxcap serve printed its file) to store it in {given}")


def load_api_key(path: str | Path) -> str:
    """The key stored alone in ``path``; refuses a file others can read, or one another user
    owns (they could put their own server's key in it): ConfigError."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError as exc:
        raise ConfigError(f"Cannot read the API key file {p}: {exc.strerror}.",
                          "check the path, or use --api-key-env VAR") from None
    if os.name == "posix" and st.st_uid != os.getuid():
        raise ConfigError(f"The API key file {p} belongs to another user (uid {st.st_uid}).",
                          "use a key file of your own: copy the key into one (chmod 600), or "
                          "use --api-key-env VAR")
    if os.name == "posix" and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"The API key file {p} can be read by other users.",
                          f"chmod 600 {p}")
    key = p.read_text(encoding="utf-8").strip()
    if not key:
        raise ConfigError(f"The API key file {p} is empty.", "put the key in it, alone on a line")
    return key


def save_api_key(path: str | Path, key: str) -> Path:
    """Write ``key`` to ``path`` readable by its owner only: a new file of its own (0600, made
    exclusively) put in place by a rename, so nothing is written through a symbolic link
    planted there (one found is refused with its fix; one planted meanwhile is replaced)."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.is_symlink():
        raise ConfigError(f"The API key file {p} is a symbolic link; the key is not written "
                          "through it.", f"remove the link (rm {p}) and store the key again")
    from ... import paths

    return paths.write_private(p, (key.strip() + "\n").encode("utf-8"))


def api_key_from_env(var: str | None) -> str | None:
    if not var:
        return None
    key = os.environ.get(var)
    if key is None or not key.strip():
        raise ConfigError(f"The environment variable {var} holding the API key is not set.",
                          f"export {var}=... before starting voxcap, or leave out --api-key-env")
    return key.strip()
