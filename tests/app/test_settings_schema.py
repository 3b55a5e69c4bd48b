"""Each setting is declared once (app/settings.py, app/settings_schema.py) and everything else
derives from it: validation and its notes, the engine key, the words a restart is explained
with, the command-line flags of every command, and a run's overrides. The facts that are
settings (engines, echo modes, the share port, the OBS address) have one definition each."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from voxcap.app.settings import AppSettings, RunOverrides, describe_change, load_settings
from voxcap.commands import build_parser
from voxcap.engine.choice import EngineChoice
from voxcap.settings_schema import declared, engine_fields, flag_dest, specs

PKG = Path(__file__).resolve().parents[2] / "voxcap"
SPECS = specs(AppSettings)


def _places(match) -> list[str]:
    """file:line of every AST node of voxcap's sources for which ``match(node)`` holds."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if match(node):
                found.append(f"{path.relative_to(PKG)}:{node.lineno}")
    return found


def _constants(node) -> tuple | None:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(
            isinstance(e, ast.Constant) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


def _files(places: list[str]) -> list[str]:
    return [p.partition(":")[0] for p in places]


def test_each_fact_that_is_a_setting_has_one_definition():
    assert _files(_places(lambda n: isinstance(n, ast.Constant) and n.value == 8765)) == [
        "netaddr.py"]  # the share port
    assert _files(_places(lambda n: isinstance(n, ast.Constant) and isinstance(n.value, str)
                          and "4455" in n.value and "\n" not in n.value)) == ["netaddr.py"]  # OBS
    assert _files(_places(lambda n: _constants(n) == ("auto", "on", "off"))) == [
        "capture/source_names.py"]  # the echo modes: capture's, the setting's choices name them
    assert _places(lambda n: _constants(n) in (("local", "remote"), ("remote", "local"))) == []
    assert specs(EngineChoice)["kind"].values == ("local", "remote")  # the engines: its choices


def test_no_command_declares_a_settings_flag_of_its_own():
    flags = {s.flag for _cls, _name, s in declared(AppSettings).values() if s.flag}
    own = _places(lambda n: isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr == "add_argument" and n.args
                  and isinstance(n.args[0], ast.Constant) and n.args[0].value in flags)
    assert own == []


def test_a_flag_says_the_same_in_every_command():
    parser, _ = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse has no API
    seen: dict[str, set[str]] = {}
    for command in commands.values():
        for action in command._actions:
            for flag in action.option_strings:
                spec = next((s for _c, _n, s in declared(AppSettings).values() if s.flag == flag),
                            None)
                if spec is not None:
                    seen.setdefault(flag, set()).add(action.choices and tuple(action.choices))
                    assert action.dest == flag_dest(spec)
                    assert action.help.startswith(spec.flag_help), (flag, action.help)
    assert {"--precision", "--graph-mode", "--model", "--eager", "--source"} <= set(seen)
    assert all(len(choices) == 1 for choices in seen.values()), seen


def test_a_bad_value_falls_back_with_what_it_must_be(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"kv_cache_gib": 0, "echo_cancel": "loud",
                                "max_model_len": 64, "overlay": {"font_size": 300}}))
    settings, problem = load_settings(path)
    assert settings == AppSettings()
    for note in ("engine.kv_cache_gib = 0 (must be 0.1 to 256, or null for automatic)",
                 'echo_cancel = "loud" (must be one of auto, on, off)',
                 "engine.max_model_len = 64 (must be 128 to 131072, or null for automatic)",
                 "overlay.font_size = 300 (must be 6 to 200)"):
        assert note in problem, problem


@pytest.mark.parametrize(("saved", "used"), [(1600, 1200), (100, 80), (2000, 2400), (1800, 1200),
                                             (9600, 2400), (0, 80)])
def test_a_saved_untrained_delay_is_replaced_by_the_nearest_trained_one(tmp_path, saved, used):
    """Not the default: the person chose a long (or short) delay, and keeps as much of that
    choice as the model was trained for; one line says so, naming the valid delays."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"engine": {"delay_ms": saved, "graph_mode": "NONE"}}))
    settings, problem = load_settings(path)
    assert settings.engine.delay_ms == used and settings.engine.graph_mode == "NONE"
    assert problem is not None and "\n" not in problem
    assert f"engine.delay_ms = {saved} is not valid" in problem
    assert "1040, 1120, 1200, 2400" in problem  # the valid ones named
    assert f"the nearest valid value, {used}, is used" in problem
    assert "back to their defaults" not in problem
    settings.engine.model_dir = "/m"
    assert settings.engine_settings().delay_ms == used  # the engine takes it


def test_the_engine_key_and_the_restart_words_come_from_the_declarations():
    changed = {"kind": "remote", "model_dir": "/m", "dummy_weights": True,
               "server_url": "ws://gpu:8000", "server_model": "voxtral", "graph_mode": "NONE",
               "delay_ms": 960, "kv_cache_gib": 2.0, "max_model_len": 4096,
               "enforce_eager": True, "precision": "fp8"}
    # in the order of the key's saved start times (app/start_times.py)
    assert engine_fields(EngineChoice) == tuple(changed)
    old = AppSettings()
    for name, value in changed.items():
        new = old.copy()
        setattr(new.engine, name, value)
        assert new.engine_key() != old.engine_key(), name
        spec = specs(EngineChoice)[name]
        assert describe_change(old, new) == f"{spec.name_in_messages} {value}"
    new = old.copy()
    new.overlay.font_size = 40
    new.echo_cancel = "off"
    assert new.engine_key() == old.engine_key()  # not an engine setting: no restart


@pytest.mark.parametrize(("argv", "values"), [
    (["gui"], {}),
    (["gui", "--model", "/m", "--eager", "--start", "--precision", "fp8"],
     {"engine.model_dir": "/m", "engine.kind": "local", "engine.enforce_eager": True,
      "start_captioning": True, "engine.precision": "fp8"}),
    (["doctor", "--server", "ws://gpu:8000"],
     {"engine.server_url": "ws://gpu:8000", "engine.kind": "remote"}),
])
def test_a_runs_overrides_are_the_settings_flags_given(argv, values):
    args = build_parser()[0].parse_args(argv)
    assert RunOverrides.from_args(AppSettings(), args).values == values
