"""The app's settings: one JSON file in the user's config directory.

    settings, problem = load_settings()      # problem: a message for the user, or None
    settings.overlay.font_size = 32
    save_settings(settings)                  # atomic (temporary file renamed over the old)
    engine_settings = settings.engine_settings()   # validated InProcessSettings/RemoteSettings

A file that cannot be read as settings (not JSON, not an object) is renamed to
``settings.json.corrupt-<time>`` and the defaults are used; a single value of the wrong type or
out of range falls back to its default. Either way ``problem`` says what happened, so the app
shows it instead of silently forgetting the user's choices. Unknown keys are ignored (a newer
version's file still loads).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..engine.settings import DEFAULT_GRAPH_MODE, GRAPH_MODES, MAX_DELAY_MS, MIN_DELAY_MS, TOKEN_MS
from ..engine.sizing.precision import PRECISIONS
from ..netaddr import parse_origin

log = logging.getLogger(__name__)

SETTINGS_NAME = "settings.json"
SECRETS = frozenset({"token", "obs_password"})  # never shown in a note (nor a repr: field(repr=False))
ENGINES = ("local", "remote")
ENGINE_STREAMS = 2  # the engine always has room for "both": switching sources never restarts it


@dataclass
class OverlaySettings:
    visible: bool = True
    lines: int = 2  # 1-5 lines of captions
    font_family: str = ""  # "" = the desktop's sans-serif
    font_size: int = 28  # points
    bold: bool = True
    text_color: str = "#ffffff"
    background_color: str = "#000000"
    background_opacity: float = 0.65  # 0 = no band, text outline only
    outline: bool = True
    click_through: bool = False
    screen: str = ""  # the monitor it was on (QScreen.name())
    geometry: list[int] | None = None  # x, y, width, height in virtual-desktop pixels


@dataclass
class ShareSettings:
    """Settings → Share captions (``voxcap.share``): off by default; this computer only unless
    ``lan``; ``token``: the access token of the LAN address (and of 127.0.0.1 with
    ``local_token``), kept so that links and QR codes stay valid across restarts ("New
    address" replaces it). The token and the OBS password are secrets: the file is written
    readable by its owner only (0600) and neither is ever in a repr, the log or a note."""

    enabled: bool = False
    lan: bool = False
    port: int = 8765  # voxcap.share.DEFAULT_PORT
    allow_origin: str = ""  # one site whose pages may read the feed, e.g. "https://notes.example"
    token: str = field(default="", repr=False)  # a secret: never in a repr, a log or a note
    local_token: bool = False  # the token on this computer's address (127.0.0.1) too
    obs: bool = False  # the stream's closed captions in OBS Studio (obs-websocket)
    obs_url: str = "ws://127.0.0.1:4455"
    # obs-websocket's (Tools → WebSocket Server Settings); a secret like the token
    obs_password: str = field(default="", repr=False)


@dataclass
class AppSettings:
    engine: str = "local"  # local: vLLM in this process; remote: a vLLM server
    model_dir: str = ""
    dummy_weights: bool = False  # self-check with the tiny model (random weights)
    server_url: str = ""
    server_model: str = ""
    graph_mode: str = DEFAULT_GRAPH_MODE
    delay_ms: int = 480
    kv_cache_gib: float | None = None  # None: sized for the streams and the session length
    precision: str = "auto"  # auto, bfloat16, fp8, fp8_kv, mxfp4, mxfp4_kv (engine/sizing/precision.py)
    max_model_len: int | None = None  # tokens per session (12.5 a second); None: 8192 or the model's max
    enforce_eager: bool = False
    source: str = "system"  # system, mic, both, a device name, app:NAME or both:NAME
    echo_cancel: str = "auto"  # "Both": the mic through the echo canceller (auto: unless headphones)
    mask_profanity: bool = False
    start_minimized: bool = False
    start_captioning: bool = False
    show_meter: bool = True
    window_geometry: str = ""  # QWidget.saveGeometry() as hex: opaque to this module
    overlay: OverlaySettings = field(default_factory=OverlaySettings)
    share: ShareSettings = field(default_factory=ShareSettings)

    # ------------------------------------------------------------------------ derived ----
    @property
    def configured(self) -> bool:
        """Whether an engine can be started at all (else the first-run dialog is due)."""
        return bool(self.server_url) if self.engine == "remote" else bool(self.model_dir)

    def engine_settings(self):
        """Validated InProcessSettings (local) or RemoteSettings; raises ConfigError with a fix."""
        if self.engine == "remote":
            from ..engine.remote.settings import RemoteSettings, default_api_key_path, load_api_key

            key_path = default_api_key_path()
            return RemoteSettings(server_url=self.server_url, model=self.server_model,
                                  api_key=load_api_key(key_path) if key_path.exists() else None,
                                  max_streams=ENGINE_STREAMS,
                                  transcription_delay_ms=self.delay_ms).validated()
        from ..engine.settings import InProcessSettings
        from ..errors import ConfigError

        if not self.model_dir:
            raise ConfigError("No model directory is set.",
                              "choose one in Settings (or download the model from the first-run "
                              "dialog), or use a vLLM server")
        return InProcessSettings(model_dir=self.model_dir, dummy_weights=self.dummy_weights,
                              graph_mode=self.graph_mode, transcription_delay_ms=self.delay_ms,
                              max_model_len=self.max_model_len, max_streams=ENGINE_STREAMS,
                              kv_cache_gib=self.kv_cache_gib, precision=self.precision,
                              enforce_eager=self.enforce_eager).validated()

    def engine_key(self) -> tuple:
        """What decides the engine: a change here needs an engine restart."""
        return (self.engine, self.model_dir, self.dummy_weights, self.server_url,
                self.server_model, self.graph_mode, self.delay_ms, self.kv_cache_gib,
                self.max_model_len, self.enforce_eager, self.precision)

    def copy(self) -> AppSettings:
        return from_dict(to_dict(self))[0]


# ------------------------------------------------------------------------- validation ----
def _check(name: str, value, default):
    """``value`` if it is a valid value of field ``name``, else raise ValueError."""
    if name == "engine" and value not in ENGINES:
        raise ValueError(f"one of {', '.join(ENGINES)}")
    if name == "precision" and value not in PRECISIONS:
        raise ValueError(f"one of {', '.join(PRECISIONS)}")
    if name == "graph_mode" and value not in GRAPH_MODES:
        raise ValueError(f"one of {', '.join(GRAPH_MODES)}")
    if name == "delay_ms" and (not MIN_DELAY_MS <= value <= MAX_DELAY_MS or value % TOKEN_MS):
        raise ValueError(f"a multiple of {TOKEN_MS} from {MIN_DELAY_MS} to {MAX_DELAY_MS}")
    if name == "kv_cache_gib" and value is not None and value <= 0:
        raise ValueError("positive, or null for automatic")
    if name == "max_model_len" and value is not None and value < 128:
        raise ValueError("at least 128")
    if name == "echo_cancel" and value not in ("auto", "on", "off"):
        raise ValueError("auto, on or off")
    if name == "lines" and not 1 <= value <= 5:
        raise ValueError("1 to 5")
    if name == "font_size" and not 6 <= value <= 200:
        raise ValueError("6 to 200")
    if name == "background_opacity" and not 0.0 <= value <= 1.0:
        raise ValueError("0 to 1")
    if name in ("text_color", "background_color") and not _is_color(value):
        raise ValueError("a colour like #ffffff")
    if name == "port" and not 1024 <= value <= 65535:
        raise ValueError("1024 to 65535")
    if name == "obs_url" and not value.startswith(("ws://", "wss://")):
        raise ValueError("a ws:// or wss:// address")
    if name == "allow_origin" and value:
        return parse_origin(value)  # ValueError: one line saying what is wrong
    if name == "geometry" and value is not None and (
            len(value) != 4 or not all(isinstance(v, int) for v in value)):
        raise ValueError("[x, y, width, height]")
    return value


def _is_color(value: str) -> bool:
    if not (isinstance(value, str) and value.startswith("#") and len(value) in (4, 7, 9)):
        return False
    try:
        int(value[1:], 16)
    except ValueError:
        return False
    return True


def _coerce(value, default, annotation: str):
    """JSON value -> the field's type (ints accepted for floats); raise ValueError if wrong."""
    if annotation.startswith("float"):
        if value is None and "None" in annotation:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("a number")
        return float(value)
    if annotation.startswith("int"):
        if value is None and "None" in annotation:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("a whole number")
        return value
    if annotation == "bool":
        if not isinstance(value, bool):
            raise ValueError("true or false")
        return value
    if annotation == "str":
        if not isinstance(value, str):
            raise ValueError("text")
        return value
    if annotation.startswith("list"):
        if value is None:
            return None
        if not isinstance(value, list):
            raise ValueError("a list")
        return list(value)
    return value


def _fill(cls, data: dict, notes: list[str], prefix: str = ""):
    obj = cls()
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value, default = data[f.name], getattr(obj, f.name)
        if dataclasses.is_dataclass(default):
            if isinstance(value, dict):
                setattr(obj, f.name, _fill(type(default), value, notes, f"{prefix}{f.name}."))
            else:
                notes.append(f"{prefix}{f.name} is not a group of settings")
            continue
        try:
            setattr(obj, f.name, _check(f.name, _coerce(value, default, str(f.type)), default))
        except (ValueError, TypeError) as exc:
            shown = "(hidden)" if f.name in SECRETS else json.dumps(value)[:40]
            notes.append(f"{prefix}{f.name} = {shown} (must be {exc})")
    return obj


def from_dict(data: dict) -> tuple[AppSettings, list[str]]:
    """Settings from a parsed file; the notes name every value replaced by its default."""
    notes: list[str] = []
    return _fill(AppSettings, data, notes), notes


def to_dict(settings: AppSettings) -> dict:
    return dataclasses.asdict(settings)


def settings_path() -> Path:
    return paths.config_dir() / SETTINGS_NAME


def load_settings(path: str | Path | None = None) -> tuple[AppSettings, str | None]:
    """The saved settings (defaults if none were saved) and a message when some were lost."""
    p = Path(path) if path is not None else settings_path()
    try:
        _owner_only(p)
        raw = p.read_bytes()
    except FileNotFoundError:
        return AppSettings(), None
    except OSError as exc:
        log.warning("cannot read the settings %s", p, exc_info=True)
        return AppSettings(), (f"Could not read the settings ({exc.strerror}: {p}); using the "
                               "defaults for now.")
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")  # noqa: TRY004
    except (UnicodeDecodeError, ValueError) as exc:
        backup = p.with_name(f"{p.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(p, backup)
            where = f"it was kept as {backup}"
        except OSError:
            where = "it could not be moved aside"
        return AppSettings(), (f"The settings file was damaged ({str(exc)[:80]}); the defaults "
                               f"are used and {where}.")
    settings, notes = from_dict(data)
    if notes:
        return settings, ("Some settings were invalid and are back to their defaults: "
                          + "; ".join(notes) + ".")
    return settings, None


def save_settings(settings: AppSettings, path: str | Path | None = None) -> Path:
    """Write atomically (a temporary file of its own, renamed over the old one: a reader sees
    the old file or the new one, never half of one, and two saves never share a temporary
    file), readable and writable by the owner only (0600: the file holds the share token and
    the OBS password). Raises OSError (the caller tells the user)."""
    p = Path(path) if path is not None else settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(to_dict(settings), indent=2, ensure_ascii=False).encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name + ".", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p


def _owner_only(p: Path) -> None:
    """A settings file that others may read (written by an older voxcap with the default
    umask) is made owner-only before it is read: it holds secrets."""
    mode = p.stat().st_mode  # FileNotFoundError: no settings yet
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        try:
            os.chmod(p, 0o600)
            log.info("settings: %s was readable by others; now by its owner only", p)
        except OSError:
            log.warning("settings: %s is readable by others and cannot be changed", p,
                        exc_info=True)


# ---------------------------------------------------------------------- run overrides ----
class RunOverrides:
    """Settings given on the command line for one run (``voxcap gui --graph-mode X``): used and
    shown for this run, never written to the settings file. A field the person changes in the
    app afterwards (to another value than the override) is theirs, and saved."""

    def __init__(self, stored: AppSettings, values: dict | None = None) -> None:
        self.stored = stored.copy()  # as read from the file
        self.values = {k: v for k, v in (values or {}).items() if v is not None}

    def apply(self) -> AppSettings:
        """The settings this run uses: the stored ones with the overrides."""
        settings = self.stored.copy()
        for key, value in self.values.items():
            setattr(settings, key, value)
        return settings

    def for_saving(self, settings: AppSettings) -> AppSettings:
        """What to write: ``settings``, with every field still at its override put back to
        the stored value."""
        out = settings.copy()
        for key, value in self.values.items():
            if getattr(out, key) == value:
                setattr(out, key, getattr(self.stored, key))
        return out


_CHANGE_NAMES = {"graph_mode": "graph mode", "delay_ms": "delay", "model_dir": "model",
                 "engine": "engine", "server_url": "server", "kv_cache_gib": "GPU memory budget",
                 "max_model_len": "session length", "enforce_eager": "fast start",
                 "dummy_weights": "random weights", "server_model": "server model",
                 "precision": "precision"}


def describe_change(old: AppSettings, new: AppSettings) -> str:
    """Why the engine restarts, in a few words (the engine fields that changed)."""
    parts = [f"{label} {getattr(new, f)}" for f, label in _CHANGE_NAMES.items()
             if getattr(old, f) != getattr(new, f)]
    return ", ".join(parts) or "settings changed"
