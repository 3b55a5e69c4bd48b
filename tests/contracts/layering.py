"""The import contract of the voxcap package, checked from the source (AST, nothing imported).

Layers, each importing only its own and lower ones:

    commands (+ cli.py, launcher.py)   the front ends
    gui                                Qt: the only place PySide6 may be imported
    app | share                        the session runtime (controller, settings, meter); the
                                       caption server (subscribes to the controller's events)
    engine | capture | captions        independent of each other
    | translate                        (translate: translated captions, on the CPU)
    ground                             errors, events, paths, logs, ... (top-level modules)

Every import counts, also one inside a function (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "PySide2")
RANK = {"ground": 0, "engine": 1, "capture": 1, "captions": 1, "translate": 1, "app": 2, "share": 2,
        "gui": 3, "commands": 4}
FRONT_ENDS = {"cli", "launcher"}  # top-level modules that are entry points, not ground


def layer_of(module: str) -> str:
    """``voxcap.engine.inprocess.engine`` -> "engine"; ``voxcap.errors`` -> "ground"."""
    parts = module.split(".")
    if len(parts) == 1:
        return "ground"
    head = parts[1]
    if head in RANK:
        return head
    return "commands" if head in FRONT_ENDS else "ground"


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x: x may be a module
                    out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
                    continue
            else:
                target = node.module or ""
            out.append((node.lineno, target))
    return out


def violations(root: Path) -> list[str]:
    """Every broken rule under the package folder ``root`` (e.g. voxcap/), as readable lines."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(root, path)
        layer = layer_of(module)
        for line, target in imports_of(path, module):
            where = f"{path.relative_to(root.parent)}:{line}"
            if target.split(".")[0] in QT:
                if layer != "gui":
                    problems.append(f"{where}: {module} ({layer}) imports Qt ({target}); Qt "
                                    "belongs under voxcap/gui only")
                continue
            if not target.startswith(root.name + ".") and target != root.name:
                continue
            other = layer_of(target)
            if other == layer or (layer, other) == ("commands", "commands"):
                continue
            if RANK[other] > RANK[layer] or (RANK[other] == RANK[layer] and other != layer):
                problems.append(f"{where}: {module} ({layer}) imports {target} ({other})")
    return problems
