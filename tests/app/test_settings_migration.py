"""A settings file written by an earlier voxcap loads with every value kept: the file
``settings_dbd677b.json`` is exactly what the version before the engine group and the window
state's own file (commit dbd677b) wrote, every value not its default (made with that version's
``AppSettings`` and ``to_dict``). The engine's values move into its group, the window state into
``state.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from voxcap.app.settings import AppSettings, load_settings, save_settings
from voxcap.app.settings_migration import migrate
from voxcap.app.window_state import LEGACY_KEYS, load_window_state
from voxcap.engine.choice import EngineChoice
from voxcap.settings_schema import get_path

OLD_FILE = Path(__file__).with_name("settings_dbd677b.json")
ENGINE_KEYS = {"engine": "engine.kind"} | {name: f"engine.{name}" for name in (
    "model_dir", "dummy_weights", "server_url", "server_model", "graph_mode", "delay_ms",
    "kv_cache_gib", "max_model_len", "enforce_eager", "precision")}


def _leaves(data: dict, prefix: str = "") -> dict:
    """{"overlay.font_size": 40, ...} of a parsed settings file."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _now_at(path: str) -> str:
    return ENGINE_KEYS.get(path, path)


def test_an_old_file_keeps_every_value(tmp_path):
    path = tmp_path / "settings.json"
    shutil.copy(OLD_FILE, path)
    old = _leaves(json.loads(OLD_FILE.read_text(encoding="utf-8")))
    in_state = {".".join(p): p for p in LEGACY_KEYS}
    defaults = AppSettings()
    assert all(get_path(defaults, _now_at(p)) != v for p, v in old.items() if p not in in_state), \
        "the old file should hold no default values: a kept value must be seen to be kept"
    state, state_problem = load_window_state(tmp_path / "state.json")  # first, as the app does
    settings, problem = load_settings(path)
    assert problem is None and state_problem is None
    state_file = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    for old_path, value in old.items():
        if old_path in in_state:
            new_path = LEGACY_KEYS[in_state[old_path]]
            assert get_path_in(state_file, new_path) == value, old_path
        else:
            assert get_path(settings, _now_at(old_path)) == value, old_path
    save_settings(settings, path)  # written in today's shape, and read back the same
    assert isinstance(json.loads(path.read_text(encoding="utf-8"))["engine"], dict)
    assert load_settings(path) == (settings, None)


def get_path_in(data: dict, dotted: str):
    for key in dotted.split("."):
        data = data[key]
    return data


def test_a_file_of_today_is_left_as_it_is():
    data = {"engine": {"kind": "remote", "graph_mode": "NONE"}, "source": "mic"}
    assert migrate(data) == data
    assert migrate({"delay_ms": 960, "source": "mic"}) == {"engine": {"delay_ms": 960},
                                                         "source": "mic"}


def test_an_old_bad_value_is_named_where_it_now_lives(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"engine": "local", "graph_mode": "FAST", "delay_ms": 960}))
    settings, problem = load_settings(path)
    assert settings.engine == EngineChoice(delay_ms=960)  # the good value kept
    assert 'engine.graph_mode = "FAST"' in problem, problem
