"""Window state in its own file: a settings file of the landed version (dbd677b, the state still
in it) moves its state on the first start with every value kept, and the settings file drops
it at its next save; a damaged or wrong state file gives the defaults and one note; the share
token is a secret (owner-only file, never in a repr or a note)."""

from __future__ import annotations

import dataclasses
import json
import stat

from voxcap.app.settings import load_settings, save_settings
from voxcap.app.settings import to_dict as settings_dict
from voxcap.app.window_state import (
    LEGACY_KEYS,
    OverlayPlace,
    WindowState,
    load_window_state,
    save_window_state,
)
from voxcap.engine.choice import EngineChoice

TOKEN = "Zq3vK9-landed-token-xYw2"
# as voxcap dbd677b's save_settings wrote it (its defaults, a few values changed)
LANDED = """{
  "engine": "local", "model_dir": "/models/voxtral", "dummy_weights": false, "server_url": "",
  "server_model": "", "graph_mode": "PIECEWISE", "delay_ms": 960, "kv_cache_gib": null,
  "max_model_len": null, "enforce_eager": false, "precision": "auto", "source": "both",
  "echo_cancel": "auto", "mask_profanity": true, "announce_captions": true,
  "start_minimized": false, "start_captioning": false, "show_meter": false,
  "window_geometry": "01d9d0cb00030000000000640000003c",
  "overlay": {"visible": false, "lines": 2, "font_family": "", "font_size": 36, "bold": true,
              "text_color": "#ffffff", "background_color": "#000000", "background_opacity": 0.65,
              "outline": true, "click_through": true, "screen": "HDMI-1",
              "geometry": [1930, 900, 1200, 140]},
  "share": {"enabled": true, "lan": true, "port": 8765, "allow_origin": "",
            "token": "Zq3vK9-landed-token-xYw2", "local_token": false, "obs": false,
            "obs_url": "ws://127.0.0.1:4455", "obs_password": "obs-pw"}
}"""
MIGRATED = WindowState(window_geometry="01d9d0cb00030000000000640000003c", show_meter=False,
                       overlay=OverlayPlace(visible=False, click_through=True, screen="HDMI-1",
                                            geometry=[1930, 900, 1200, 140]),
                       share_token=TOKEN)


def _leaves(data: dict, prefix: tuple = ()):
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*prefix, key))
        else:
            yield (*prefix, key), value


def _at(data: dict, path: tuple):
    for key in path:
        data = data[key]
    return data


def test_a_landed_settings_file_keeps_every_value(tmp_path):
    settings_file, state_file = tmp_path / "settings.json", tmp_path / "state.json"
    settings_file.write_text(LANDED)
    settings, problem = load_settings(settings_file)
    state, state_problem = load_window_state(state_file)
    assert problem is None and state_problem is None
    assert state == MIGRATED and state.share_token == TOKEN
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600  # written at once, owner-only
    # every value of the old file is in the settings or the state, under its name there
    state_values = {old: _at(json.loads(state_file.read_text()), tuple(new.split(".")))
                    for old, new in LEGACY_KEYS.items()}
    now = settings_dict(settings)
    for path, value in _leaves(json.loads(LANDED)):
        kept = state_values[path] if path in LEGACY_KEYS else _at(now, _today(path))
        assert kept == value, (path, kept, value)

    save_settings(settings, settings_file)  # the next save: no window state in settings.json
    saved = json.loads(settings_file.read_text())
    assert not [p for p in LEGACY_KEYS if _at_or_none(saved, p) is not None]
    assert TOKEN not in settings_file.read_text()
    assert load_window_state(state_file) == (MIGRATED, None)  # from its own file now


def _today(path: tuple) -> tuple:
    """Where a key of the landed file is now: the engine's settings moved into its group."""
    if path == ("engine",):
        return ("engine", "kind")
    if path[0] in {f.name for f in dataclasses.fields(EngineChoice)}:
        return ("engine", *path)
    return path


def _at_or_none(data: dict, path: tuple):
    try:
        return _at(data, path)
    except KeyError:
        return None


def test_the_state_file_wins_over_an_older_settings_file(tmp_path):
    """Once the state has its file, leftovers in settings.json (not saved since) are ignored."""
    (tmp_path / "settings.json").write_text(LANDED)
    save_window_state(WindowState(show_meter=True), tmp_path / "state.json")
    assert load_window_state(tmp_path / "state.json") == (WindowState(show_meter=True), None)


def test_no_files_yet_is_the_defaults_and_no_file(tmp_path):
    assert load_window_state(tmp_path / "state.json") == (WindowState(), None)
    (tmp_path / "settings.json").write_text('{"source": "mic"}')  # nothing of the state in it
    assert load_window_state(tmp_path / "state.json") == (WindowState(), None)
    assert not (tmp_path / "state.json").exists()


def test_a_damaged_state_file_is_kept_aside_with_one_note(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{not json")
    state, problem = load_window_state(path)
    assert state == WindowState()
    (backup,) = tmp_path.glob("state.json.corrupt-*")
    assert problem.startswith("The window state file was damaged") and str(backup) in problem
    assert problem.count("\n") == 0


def test_wrong_values_fall_back_and_the_token_is_never_shown(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"show_meter": "yes", "share_token": 12345678,
                                "overlay": {"geometry": [1, 2, 3], "screen": "DP-1"}}))
    state, problem = load_window_state(path)
    assert state == WindowState(overlay=OverlayPlace(screen="DP-1"))
    assert problem.startswith("Some window state was invalid and is back to its defaults: ")
    assert "show_meter = \"yes\" (must be true or false)" in problem
    assert "overlay.geometry = [1, 2, 3] (must be [x, y, width, height] or null)" in problem
    assert "share_token = (hidden) (must be text)" in problem and "12345678" not in problem


def test_the_token_is_a_secret(tmp_path):
    state = WindowState(share_token=TOKEN)
    assert TOKEN not in repr(state) and TOKEN not in str(state)
    path = save_window_state(state, tmp_path / "cfg" / "state.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_window_state(path)[0].share_token == TOKEN
