"""Each engine setting is declared once, in the engine (``InProcessSettings``,
``RemoteSettings``), and everything else derives from that declaration: the app's group
(``EngineChoice``), the command-line flags, the Settings dialog's rows. A second declaration
anywhere in voxcap/ (a default written again, a help text or label written twice, the
delay's 480 outside framing.py) fails here."""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
from pathlib import Path

import pytest

from voxcap.commands import build_parser
from voxcap.engine.choice import EngineChoice
from voxcap.engine.remote.settings import RemoteSettings
from voxcap.engine.settings import InProcessSettings
from voxcap.framing import DEFAULT_DELAY_MS
from voxcap.settings_schema import declared, flag_dest, specs

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the dialog, without a display
PKG = Path(__file__).resolve().parents[1] / "voxcap"
ENGINES = (InProcessSettings, RemoteSettings)
ENGINE_SPECS = {name: spec for cls in ENGINES for name, spec in specs(cls).items()}
# the setting's names in the person's words: what the CLI and the dialog show of them
NAMED = {name: spec for name, spec in specs(EngineChoice).items()}


@functools.cache
def _trees() -> tuple[tuple[str, ast.Module], ...]:
    return tuple((path.relative_to(PKG).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted(PKG.rglob("*.py")))


def _field_default(cls, name: str):
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def test_the_app_gathers_the_engines_settings_and_declares_none():
    for name, spec in ENGINE_SPECS.items():
        owner = next(cls for cls in ENGINES if name in specs(cls))
        assert NAMED[name] is spec, name  # the very declaration, not a copy
        assert _field_default(EngineChoice, name) == _field_default(owner, name), name
    assert set(NAMED) - set(ENGINE_SPECS) == {"kind"}  # which engine: the choice's own


def _cli_actions() -> dict[str, object]:
    parser, _ = build_parser()
    live = parser._subparsers._group_actions[0].choices["live"]
    return {flag: a for a in live._actions for flag in a.option_strings}


def _dialog_rows(qtbot) -> dict[str, object]:
    """{label text: the widget of that row} of Settings → Engine (a check box: its text)."""
    from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel

    from voxcap.app.settings import AppSettings
    from voxcap.gui.settings.engine_page import EnginePanel

    panel = EnginePanel(AppSettings())
    qtbot.addWidget(panel)
    rows = {}
    for row in range(panel.form.rowCount()):
        label = panel.form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        field = panel.form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        widget = field.widget() if field else None
        if isinstance(widget, QCheckBox):
            rows[widget.text()] = widget
        elif label is not None and isinstance(label.widget(), QLabel) and label.widget().text():
            rows[label.widget().text()] = widget
    return rows


def test_the_cli_and_the_dialog_derive_from_the_same_declarations(qtbot):
    from PySide6.QtWidgets import QCheckBox, QComboBox

    from voxcap.gui.settings.delay_row import DelayRow

    actions, rows = _cli_actions(), _dialog_rows(qtbot)
    in_cli = {name for name, spec in NAMED.items() if spec.flag in actions}
    in_dialog = {name for name, spec in NAMED.items()
                 if spec.label in rows or f"{spec.label}:" in rows}
    assert in_cli == in_dialog == set(NAMED)  # every engine setting in both, nothing else
    for name, spec in NAMED.items():
        action = actions[spec.flag]
        assert action.dest == flag_dest(spec) and action.help.startswith(spec.flag_help), name
        widget = rows.get(spec.label) or rows[f"{spec.label}:"]
        if isinstance(widget, DelayRow):  # its presets first, then the other values
            box = widget.box
            offered = [(box.itemData(i), box.itemText(i)) for i in range(box.count())
                       if box.itemData(i) is not None]  # not the separator
            assert sorted(offered) == list(spec.choices), name
        elif isinstance(widget, QComboBox):
            offered = tuple((widget.itemData(i), widget.itemText(i)) for i in range(widget.count()))
            assert offered == spec.choices, name
        else:
            assert not spec.choices, name
        switch = next(str(f.type) == "bool" for f in dataclasses.fields(EngineChoice)
                      if f.name == name)
        assert isinstance(widget, QCheckBox) == switch, name


def _declarations(name: str) -> list[str]:
    """Where voxcap gives ``name`` a value of its own: a class field (or function argument)
    with a literal default or a ``setting(...)``. A reference (``same_setting``, a constant's
    name) is not one, nor "nothing" (None, "", False, 0: not set, whatever the setting is)."""
    def literal(value) -> bool:
        return isinstance(value, ast.Constant) and bool(value.value)

    found = []
    for rel, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                value = node.value
                if literal(value) or (isinstance(value, ast.Call)
                                      and getattr(value.func, "id", "") == "setting"):
                    found.append(f"{rel}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                named = [*a.args[len(a.args) - len(a.defaults):], *a.kwonlyargs]
                defaults = [*a.defaults, *a.kw_defaults]
                found += [f"{rel}:{node.lineno} (argument)"
                          for arg, default in zip(named, defaults, strict=True)
                          if arg.arg == name and default is not None and literal(default)]
    return found


@pytest.mark.parametrize("name", sorted(ENGINE_SPECS))
def test_each_engine_setting_has_one_declaration(name):
    where = _declarations(name)
    assert len(where) == 1 and where[0].startswith("engine/"), where  # in the engine


def test_a_settings_name_says_which_one_it_is():
    """Flags, run overrides and a ConfigError name a setting without its group: each name is
    one setting's."""
    from voxcap.app.settings import AppSettings

    names = [path.rpartition(".")[2] for path in declared(AppSettings)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_one_name_for_the_delay():
    for cls in (*ENGINES, EngineChoice):
        assert "transcription_delay_ms" not in {f.name for f in dataclasses.fields(cls)}, cls


def _constants(match) -> list[str]:
    return [f"{rel}:{node.lineno}" for rel, tree in _trees() for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and match(node.value)]


def test_each_default_is_written_once():
    # the delay's 480 (framing.py) and the graph mode's FULL_DECODE_ONLY (engine/settings.py)
    def files(places: list[str]) -> list[str]:
        return [p.partition(":")[0] for p in places]

    delays = _constants(lambda v: v == DEFAULT_DELAY_MS and type(v) is int)
    assert files(delays) == ["framing.py"], delays
    graph_mode = _field_default(InProcessSettings, "graph_mode")
    modes = _constants(lambda v: v == graph_mode)
    assert files(modes) == ["engine/settings.py"], modes


def test_each_help_text_and_label_is_written_once():
    texts = [t for spec in NAMED.values()
             for t in (spec.label, spec.flag_help, *(text for _v, text in spec.choices)) if t]
    for text in texts:
        written = _constants(lambda v, text=text: v == text)
        assert len(written) <= 1, (text, written)  # 0: made from other text (an f-string)
    # and no help is a piece of another setting's declaration kept apart (GRAPH_MODE_HELP
    # keyed again outside the engine)
    for rel, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                assert not any(n.endswith("GRAPH_MODE_HELP") for n in names) \
                    or rel == "engine/settings.py", f"{rel}:{node.lineno}"
