"""docs/reference/ is generated (scripts/gen_reference.py) from the settings' declarations and
the command-line parsers: the committed pages match the code, whoever runs the check where,
and the generator walks nested groups of settings however they are declared."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gen_reference.py"


def generator():
    """The script as a module (registered first: its dataclasses look their module up)."""
    if "gen_reference" not in sys.modules:
        spec = importlib.util.spec_from_file_location("gen_reference", SCRIPT)
        sys.modules["gen_reference"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["gen_reference"])
    return sys.modules["gen_reference"]


def check(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)})


def test_committed_reference_pages_are_current():
    r = check(dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_pages_do_not_depend_on_this_machine(tmp_path):
    """Another home, other XDG folders, a narrow terminal: the same pages."""
    env = {**os.environ, "HOME": str(tmp_path / "someone"), "COLUMNS": "40",
           "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "VOXCAP_STATE_DIR": str(tmp_path / "log"), "VOXCAP_DATA_DIR": str(tmp_path / "data")}
    r = check(env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_setting_and_command_has_its_section():
    pages = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "reference").glob("*.md")}
    gen = generator()
    groups = gen.setting_groups(gen._load(gen.ROOT_SETTINGS))
    keys = [s.key for g in groups for s in g.settings]
    assert "overlay.font_size" in keys and "share.port" in keys  # nested groups walked
    for key in keys:
        assert f"\n### {key}\n" in pages["settings.md"], key
    for command in ("gui", "live", "transcribe", "serve", "doctor"):
        assert f"\n## voxcap {command}\n" in pages["commands.md"], command


def test_nested_groups_are_found_by_their_dataclasses():
    """However a group is declared (a default instance, a factory, only its type), its fields are
    listed under its key, with their spec read from the field's metadata."""
    gen = generator()

    @dataclasses.dataclass
    class Inner:
        delay_ms: int = dataclasses.field(default=480, metadata={"spec": object()})

    @dataclasses.dataclass
    class Outer:
        name: str = "x"
        by_factory: Inner = dataclasses.field(default_factory=Inner)

    groups = gen.setting_groups(Outer)
    assert [(g.key, [s.key for s in g.settings]) for g in groups] == [
        ("", ["name"]), ("by_factory", ["by_factory.delay_ms"])]
    assert groups[1].settings[0].default == 480 and groups[1].settings[0].spec is not None
