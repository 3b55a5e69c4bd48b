"""The app's settings: one JSON file in the user's config directory.

    settings, problem = load_settings()      # problem: a message for the user, or None
    settings.overlay.font_size = 32
    save_settings(settings)                  # atomic (temporary file renamed over the old)
    settings.engine.graph_mode = "NONE"      # the engine's settings: a group (engine/choice.py)
    engine_settings = settings.engine_settings()   # validated InProcessSettings/RemoteSettings

A file that cannot be read as settings (not JSON, not an object) is renamed to
``settings.json.corrupt-<time>`` and the defaults are used; a single value of the wrong type or
out of range falls back to its default. Either way ``problem`` says what happened, so the app
shows it instead of silently forgetting the user's choices. Unknown keys are ignored (a newer
version's file still loads); an older version's file is read in today's shape first
(``settings_migration``). Where the windows are, and the share token, are not preferences:
``window_state`` keeps them in a file of their own.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..capture.source_names import ECHO_MODES, SOURCE_HELP
from ..engine.choice import EngineChoice
from ..netaddr import OBS_ADDRESS, SHARE_PORT, parse_origin
from ..settings_schema import declared, flag_values, get_path, set_path, setting, spec_of
from .settings_migration import migrate
from .translation_settings import ORIGINAL, TRANSLATION, TranslationSettings

log = logging.getLogger(__name__)

SETTINGS_NAME = "settings.json"
SECRETS = frozenset({"obs_password"})  # never shown in a note (nor a repr: field(repr=False))
ENGINE_STREAMS = 2  # the engine always has room for "both": switching sources never restarts it


def _color(value: str) -> str:
    if not (value.startswith("#") and len(value) in (4, 7, 9)) or not _is_hex(value[1:]):
        raise ValueError("a colour like #ffffff")
    return value


def _is_hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


def _websocket_address(value: str) -> str:
    if not value.startswith(("ws://", "wss://")):
        raise ValueError("a ws:// or wss:// address")
    return value


def _origin(value: str) -> str:
    return parse_origin(value) if value else value  # ValueError: one line saying what is wrong


@dataclass
class OverlaySettings:
    """How the caption overlay looks (where it is and whether it is shown: ``window_state``)."""

    lines: int = setting(2, label="L&ines", low=1, high=5)
    font_family: str = setting("", label="&Font")  # "" = the desktop's sans-serif
    font_size: int = setting(28, label="Si&ze", words="font size", low=6, high=200)  # points
    bold: bool = setting(True, label="Bold")
    text_color: str = setting("#ffffff", label="&Text colour", check=_color)
    background_color: str = setting("#000000", label="Bac&kground", check=_color)
    # 0 = no band, text outline only
    background_opacity: float = setting(0.65, label="&Opacity", low=0.0, high=1.0)
    outline: bool = setting(True, label="Dark outline around the letters")


@dataclass
class ShareSettings:
    """Settings → Share captions (``voxcap.share``): off by default; this computer only unless
    ``lan``. The access token of the LAN address (and of 127.0.0.1 with ``local_token``) is
    window state (``window_state``), made by the app. The OBS password is a secret: the file
    is written readable by its owner only (0600) and it is never in a repr, the log or a note."""

    enabled: bool = False
    lan: bool = setting(False, flag="--share-lan",
                        flag_help="with --share: on the local network too; the address carries a "
                                  "new random access token")
    # --share alone: this port
    port: int = setting(
        SHARE_PORT, label="Port", low=1024, high=65535, flag="--share", metavar="PORT",
        flag_const=SHARE_PORT,
        flag_help=f"serve the captions at http://127.0.0.1:PORT/ (default {SHARE_PORT}): the page, "
                  "/events, /captions.txt|vtt")
    # one site whose pages may read the feed, e.g. "https://notes.example"
    allow_origin: str = setting(
        "", label="Allow site", check=_origin, flag="--share-allow-origin", metavar="ORIGIN",
        flag_help="with --share: the one site whose pages may read the feed, exactly "
                  "scheme://host[:port] (e.g. https://notes.example; never * or null)",
        flag_fix="leave it out, or give the one site, e.g. --share-allow-origin "
                 "https://notes.example")
    # the token on this computer's address (127.0.0.1) too
    local_token: bool = setting(
        False, flag="--share-token",
        flag_help="with --share: the access token on this computer's address too (any user or "
                  "program on this computer can read the captions otherwise)")
    obs: bool = False  # the stream's closed captions in OBS Studio (obs-websocket)
    # --obs-captions alone: obs-websocket's own address
    obs_url: str = setting(
        OBS_ADDRESS, label="OBS WebSocket", check=_websocket_address, flag="--obs-captions",
        metavar="URL", flag_const=OBS_ADDRESS,
        flag_help="send the captions to OBS Studio as its stream's closed captions, through "
                  f"obs-websocket (default {OBS_ADDRESS})",
        flag_fix=f"give obs-websocket's address, e.g. --obs-captions {OBS_ADDRESS}")
    # obs-websocket's (Tools → WebSocket Server Settings); a secret
    obs_password: str = field(default="", repr=False)
    # what OBS's closed captions carry while lines are translated (translation.translate_to):
    # the translation goes once a line has ended, a line not translated as its original
    obs_text: str = setting(
        ORIGINAL, label="OBS captions &carry", words="OBS captions' text",
        choices=((ORIGINAL, "The original, as it is spoken"),
                 (TRANSLATION, "The translation, once each line has ended")),
        flag="--obs-text", metavar="WHICH",
        flag_help="with --obs-captions and --translate-to: send OBS the original (default, as "
                  "it is spoken) or the translation (each line once it has ended and been "
                  "translated)")


ECHO_HELP = {"auto": "Automatic (on unless the output is headphones)", "on": "On", "off": "Off"}


@dataclass
class AppSettings:
    # which engine and its settings, each declared where the engine uses it
    engine: EngineChoice = field(default_factory=EngineChoice)
    # system, mic, both, a device name, app:NAME or both:NAME
    source: str = setting("system", flag="--source", metavar="SOURCE", flag_help=SOURCE_HELP)
    # "Both": the mic through the echo canceller (auto: unless headphones)
    echo_cancel: str = setting(
        "auto", label="Ec&ho cancellation for \"Both\" (the microphone without the speakers)",
        choices=tuple((m, ECHO_HELP[m]) for m in ECHO_MODES), flag="--echo-cancel",
        flag_help="with both: capture the microphone through the sound server's echo "
                  "canceller, so it does not repeat what the speakers play (default: auto, on "
                  "unless the output is headphones)")
    mask_profanity: bool = setting(
        False, label="Mask &profanity in captions and exports (the journal keeps the words)")
    # names and terms corrected in the captions (captions.glossary); "": the word list kept in
    # Settings, glossary.txt in the config folder (app.glossary_file)
    glossary_file: str = setting(
        "", label="&Word list", flag="--glossary", metavar="FILE",
        flag_help="spell the names and terms of this word list right in the captions, transcript "
                  "and journal (UTF-8, one term per line, # starts a comment)")
    announce_captions: bool = setting(
        True, label="Anno&unce finished caption lines to screen readers (speaker first)")
    # the caption watchdog (app.session.caption_watchdog): speech this long with no caption text
    # is said (8 s: longer than any trained delay, 2.4 s, plus a sentence); a fresh engine
    # session is tried after the second (15 s: a restart costs ~1 s of warm-up, not worth it
    # on a pause in the text, and a reader waits no longer than two sentences)
    no_captions_after_s: float = setting(
        8.0, label="Say \"no captions\" after this much speech without captions (s)",
        words="no-captions warning", low=3.0, high=120.0, flag="--no-captions-after",
        metavar="SECONDS", flag_help="say so when speech gets no captions for this long "
        "(default 8 s)")
    fresh_session_after_s: float = setting(
        15.0, label="Start a fresh caption session after this much speech without captions (s)",
        words="fresh session after", low=5.0, high=600.0, flag="--fresh-session-after",
        metavar="SECONDS", flag_help="start a fresh caption session when speech gets no "
        "captions for this long (default 15 s)")
    # a live source with no sound (below -60 dBFS) this long while the other side of "Both" has
    # sound is said; alone, or both silent, three times as long (app.session.input_levels)
    no_sound_after_s: float = setting(
        10.0, label="Say \"no sound\" after a source is silent this long (s)",
        words="no-sound warning", low=3.0, high=600.0, flag="--no-sound-after",
        metavar="SECONDS", flag_help="say so when a live source has no sound for this long while the "
        "other side of Both has sound; alone, after three times as long (default 10 s)")
    start_minimized: bool = setting(False, label="Start mi&nimized", flag="--minimized",
                                    flag_help="start minimized")
    start_captioning: bool = setting(False, label="Start captioning on laun&ch", flag="--start",
                                     flag_help="start captioning at once")
    overlay: OverlaySettings = field(default_factory=OverlaySettings)
    share: ShareSettings = field(default_factory=ShareSettings)
    translation: TranslationSettings = field(default_factory=TranslationSettings)

    # ------------------------------------------------------------------------ derived ----
    @property
    def configured(self) -> bool:
        """Whether an engine can be started at all (else the first-run dialog is due)."""
        return bool(self.engine.server_url if self.engine.remote else self.engine.model_dir)

    def engine_settings(self, wait_for_server: bool = False):
        """Validated InProcessSettings (local) or RemoteSettings; raises ConfigError with a fix.
        ``wait_for_server``: a vLLM server that is not there yet is tried again until it
        answers (each wait said), and a key it writes meanwhile is taken (the app)."""
        if self.engine.remote:
            from .remote_key import api_key

            return self.engine.settings_for(
                max_streams=ENGINE_STREAMS, api_key=api_key(self.engine.server_url),
                start_retry_s=None if wait_for_server else 0.0)
        from ..errors import ConfigError

        if not self.engine.model_dir:
            raise ConfigError("No model directory is set.",
                              "choose one in Settings (or download the model from the first-run "
                              "dialog), or use a vLLM server", setting="model_dir")
        return self.engine.settings_for(max_streams=ENGINE_STREAMS)

    def engine_key(self) -> tuple:
        """What decides the engine: a change here needs an engine restart."""
        return self.engine.key()

    def copy(self) -> AppSettings:
        return from_dict(to_dict(self))[0]


# ------------------------------------------------------------------------- validation ----
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


def _fill(cls, data: dict, notes: list[str], nearest: list[str], prefix: str = ""):
    obj = cls()
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value, default = data[f.name], getattr(obj, f.name)
        if dataclasses.is_dataclass(default):
            if isinstance(value, dict):
                setattr(obj, f.name, _fill(type(default), value, notes, nearest,
                                           f"{prefix}{f.name}."))
            else:
                notes.append(f"{prefix}{f.name} is not a group of settings")
            continue
        spec = spec_of(cls, f.name)
        shown = "(hidden)" if f.name in SECRETS else json.dumps(value)[:40]
        typed = None  # the value in the field's type, once it is
        try:
            typed = _coerce(value, default, str(f.type))
            setattr(obj, f.name, spec.validate(typed))
        except (ValueError, TypeError) as exc:
            if spec.nearest is None or typed is None:
                notes.append(f"{prefix}{f.name} = {shown} (must be {exc})")
                continue
            # e.g. a delay the model was not trained on: the closest it was, not the default
            setattr(obj, f.name, spec.nearest(typed))
            nearest.append(f"The saved {prefix}{f.name} = {shown} is not valid (it must be "
                           f"{exc}); the nearest valid value, {getattr(obj, f.name)}, is used.")
    return obj


def read_dict(data: dict) -> tuple[AppSettings, list[str], list[str]]:
    """Settings from a parsed file (an earlier version's too: ``settings_migration``), the
    notes naming each value replaced by its default, and those naming each value replaced by
    the nearest valid one (``Spec.nearest``)."""
    notes: list[str] = []
    nearest: list[str] = []
    return _fill(AppSettings, migrate(data), notes, nearest), notes, nearest


def from_dict(data: dict) -> tuple[AppSettings, list[str]]:
    """Settings from a parsed file and the notes of every value replaced (``read_dict``)."""
    settings, notes, nearest = read_dict(data)
    return settings, notes + nearest


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
    data, reason, where = paths.json_object(p, raw)
    if data is None:
        return AppSettings(), (f"The settings file was damaged ({reason}); the defaults "
                               f"are used and {where}.")
    settings, notes, nearest = read_dict(data)
    said = list(nearest)
    if notes:
        said.append("Some settings were invalid and are back to their defaults: "
                    + "; ".join(notes) + ".")
    return settings, " ".join(said) or None


def save_settings(settings: AppSettings, path: str | Path | None = None) -> Path:
    """Write atomically (a temporary file of its own, renamed over the old one: a reader sees
    the old file or the new one, never half of one, and two saves never share a temporary
    file), readable and writable by the owner only (0600: the file holds the OBS password).
    Raises OSError (the caller tells the user)."""
    p = Path(path) if path is not None else settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(to_dict(settings), indent=2, ensure_ascii=False).encode("utf-8")
    return paths.write_private(p, data)


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

    @classmethod
    def from_args(cls, stored: AppSettings, args) -> RunOverrides:
        """The settings flags given in ``args``; a model folder given means this computer's
        engine, a server given means that server's."""
        return cls(stored, given_settings(args))

    def apply(self) -> AppSettings:
        """The settings this run uses: the stored ones with the overrides."""
        settings = self.stored.copy()
        for path, value in self.values.items():
            set_path(settings, path, value)
        return settings

    def for_saving(self, settings: AppSettings) -> AppSettings:
        """What to write: ``settings``, with every field still at its override put back to
        the stored value."""
        out = settings.copy()
        for path, value in self.values.items():
            if get_path(out, path) == value:
                set_path(out, path, get_path(self.stored, path))
        return out


def given_settings(args) -> dict:
    """{path: value} of the settings flags given in ``args``; a model folder given means this
    computer's engine, a server given means that server's."""
    values = flag_values(args, AppSettings)
    if "engine.model_dir" in values:
        values.setdefault("engine.kind", "local")
    if "engine.server_url" in values:
        values.setdefault("engine.kind", "remote")
    return values


def describe_change(old: AppSettings, new: AppSettings) -> str:
    """Why the engine restarts, in a few words (the engine fields that changed)."""
    parts = [f"{spec.name_in_messages} {get_path(new, path)}"
             for path, (_cls, _name, spec) in declared(AppSettings).items()
             if spec.restarts_engine and get_path(old, path) != get_path(new, path)]
    return ", ".join(parts) or "settings changed"
