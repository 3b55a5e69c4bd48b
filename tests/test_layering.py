"""The import contract (tests/contracts/layering.py) holds for voxcap, and the check catches a
core module importing Qt or a lower layer importing a higher one."""

from __future__ import annotations

from pathlib import Path

from contracts.layering import layer_of, violations

import voxcap

PACKAGE = Path(voxcap.__file__).parent


def test_voxcap_keeps_its_layers():
    problems = violations(PACKAGE)
    assert not problems, "\n".join(problems)


def _tree(tmp_path, files: dict[str, str]) -> Path:
    root = tmp_path / "voxcap"
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_a_core_module_importing_qt_fails(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "engine/__init__.py": "",
        "engine/local.py": "def f():\n    from PySide6.QtCore import QTimer\n",
        "gui/__init__.py": "", "gui/app.py": "from PySide6.QtWidgets import QApplication\n",
    })
    (problem,) = violations(root)
    assert "voxcap/engine/local.py:2" in problem and "Qt" in problem


def test_an_upward_or_sideways_import_fails(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "errors.py": "from .app import controller\n",
        "app/__init__.py": "", "app/controller.py": "from ..engine import local\n",
        "engine/__init__.py": "", "engine/local.py": "from ..captions.words import x\n",
        "captions/__init__.py": "", "captions/words.py": "from .. import errors\n",
        "commands/__init__.py": "", "commands/live.py": "from ..gui import app\n",
        "gui/__init__.py": "", "gui/app.py": "from ..commands import live\n",
    })
    problems = violations(root)
    assert len(problems) == 3, problems
    assert any("errors" in p and "(app)" in p for p in problems)  # ground -> app
    assert any("engine.local" in p and "(captions)" in p for p in problems)  # sideways
    assert any("gui.app" in p and "(commands)" in p for p in problems)  # gui -> commands


def test_layers_of_modules():
    assert layer_of("voxcap.errors") == "ground" and layer_of("voxcap.cli") == "commands"
    assert layer_of("voxcap.engine.local") == "engine" and layer_of("voxcap.gui") == "gui"
