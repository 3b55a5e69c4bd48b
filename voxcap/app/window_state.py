"""What the windows remember between runs, apart from the preferences: one JSON file beside
``settings.json`` (qutebrowser's ``state``, napari's ``preferences_exclude``).

    state, problem = load_window_state()   # problem: a message for the user, or None
    state.overlay.geometry = [10, 20, 900, 150]
    save_window_state(state)               # atomic, owner-only (0600: the share token)

State is what the windows change by being used, not what Settings chooses: the main window's
geometry, the meter's visibility, the overlay's place and what its own menu toggles (shown,
click-through), and the share token (made by the app; "New address" replaces it). Settings
never copies it back or restarts anything for it.

A file that cannot be read as state is renamed to ``state.json.corrupt-<time>`` and the
defaults are used; a wrong value falls back to its default; ``problem`` says so. Settings files
of voxcap before the state had its own file carry these values: the first start without a state
file moves them here (the next save of the settings leaves them out), nothing lost.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from .settings import SETTINGS_NAME

log = logging.getLogger(__name__)

STATE_NAME = "state.json"
# where the values were in settings.json before they had their own file: old key -> field here
LEGACY_KEYS = {
    ("window_geometry",): "window_geometry",
    ("show_meter",): "show_meter",
    ("overlay", "visible"): "overlay.visible",
    ("overlay", "click_through"): "overlay.click_through",
    ("overlay", "screen"): "overlay.screen",
    ("overlay", "geometry"): "overlay.geometry",
    ("share", "token"): "share_token",
}


@dataclass
class OverlayPlace:
    visible: bool = True
    click_through: bool = False
    screen: str = ""  # the monitor it was on (QScreen.name())
    # x, y, width, height in virtual-desktop pixels; None: placed by the app
    geometry: list[int] | None = None


@dataclass
class WindowState:
    window_geometry: str = ""  # QWidget.saveGeometry() as hex: opaque to this module
    show_meter: bool = True
    overlay: OverlayPlace = field(default_factory=OverlayPlace)
    # the share address's access token: kept so that links and QR codes stay valid across
    # restarts; a secret, never in a repr, a log or a note
    share_token: str = field(default="", repr=False)


def state_path() -> Path:
    return paths.config_dir() / STATE_NAME


# ------------------------------------------------------------------------- validation ----
def _checked(name: str, value, default):
    """``value`` if it has the kind of the field's default, else ValueError (what it must be)."""
    if name == "geometry":
        if value is None:
            return None
        if not (isinstance(value, list) and len(value) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise ValueError("[x, y, width, height] or null")
        return list(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError("true or false")
    elif not isinstance(value, str):
        raise ValueError("text")
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
                notes.append(f"{prefix}{f.name} is not a group")
            continue
        try:
            setattr(obj, f.name, _checked(f.name, value, default))
        except ValueError as exc:
            shown = "(hidden)" if f.name == "share_token" else json.dumps(value)[:40]
            notes.append(f"{prefix}{f.name} = {shown} (must be {exc})")
    return obj


def from_dict(data: dict) -> tuple[WindowState, list[str]]:
    """The state from a parsed file; the notes name every value replaced by its default."""
    notes: list[str] = []
    return _fill(WindowState, data, notes), notes


def _problem(notes: list[str]) -> str | None:
    return ("Some window state was invalid and is back to its defaults: " + "; ".join(notes)
            + ".") if notes else None


def to_dict(state: WindowState) -> dict:
    return dataclasses.asdict(state)


# ------------------------------------------------------------------------ the file ----
def load_window_state(path: str | Path | None = None,
                      settings_file: str | Path | None = None) -> tuple[WindowState, str | None]:
    """The saved state (defaults if none), and a message when some was lost. With no state file
    yet, the values an older voxcap kept in ``settings_file`` (default: the settings file beside
    it) are taken, and written to the state file at once."""
    p = Path(path) if path is not None else state_path()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return _migrated(p, Path(settings_file) if settings_file is not None
                         else p.with_name(SETTINGS_NAME))
    except OSError as exc:
        log.warning("cannot read the window state %s", p, exc_info=True)
        return WindowState(), (f"Could not read where the windows were ({exc.strerror}: {p}); "
                               "they start at their defaults.")
    data, reason, where = paths.json_object(p, raw)
    if data is None:
        return WindowState(), (f"The window state file was damaged ({reason}); the windows "
                               f"start at their defaults and {where}.")
    state, notes = from_dict(data)
    return state, _problem(notes)


def save_window_state(state: WindowState, path: str | Path | None = None) -> Path:
    """Write atomically, owner-only (0600: the share token). Raises OSError (the caller tells
    the user)."""
    p = Path(path) if path is not None else state_path()
    data = json.dumps(to_dict(state), indent=2, ensure_ascii=False).encode("utf-8")
    return paths.write_private(p, data)


def legacy_state(settings_data: dict) -> dict:
    """The state values found in a settings file of an older voxcap, as this file nests them."""
    out: dict = {}
    for old, new in LEGACY_KEYS.items():
        *old_groups, old_name = old
        group: dict | None = settings_data
        for key in old_groups:
            group = group.get(key) if isinstance(group, dict) else None
        if not isinstance(group, dict) or old_name not in group:
            continue
        value = group[old_name]
        *groups, name = new.split(".")
        target = out
        for g in groups:
            target = target.setdefault(g, {})
        target[name] = value
    return out


def _migrated(p: Path, settings_file: Path) -> tuple[WindowState, str | None]:
    """No state file yet: the state an older settings file holds, saved as the state file."""
    try:
        data = json.loads(settings_file.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return WindowState(), None
    except (OSError, UnicodeDecodeError, ValueError):
        # the settings' own loading says what is wrong with the file
        log.info("window state: no state to take from %s (unreadable)", settings_file, exc_info=True)
        return WindowState(), None
    found = legacy_state(data) if isinstance(data, dict) else {}
    if not found:
        return WindowState(), None
    state, notes = from_dict(found)
    try:
        save_window_state(state, p)
        log.info("window state: moved from %s to %s", settings_file, p)
    except OSError:  # kept for this run; the next save tries again
        log.warning("window state: could not write %s", p, exc_info=True)
    return state, _problem(notes)
