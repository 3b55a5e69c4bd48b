"""The engine's parts kept apart, checked from the source (AST, nothing imported), beside the
layering contract (layering.py):

1. vLLM-free: the remote engine and everything it imports, and what the remote-only install runs
   at import time (its entry points, the controller, the GUI, the caption page), never import
   ``vllm`` or ``torch``.
2. Adapter: only ``voxcap/engine/vllm_adapter/`` reaches into vLLM's internals. Elsewhere a vLLM
   import names one of vLLM's public modules (PUBLIC_VLLM) and no private name.
3. No circles: no voxcap module reaches itself through imports (lazy ones count).
"""

from __future__ import annotations

import ast
from pathlib import Path

from .layering import _module_name, imports_of

HEAVY = ("vllm", "torch")
PUBLIC_VLLM = {"vllm", "vllm.engine.arg_utils", "vllm.engine.protocol", "vllm.sampling_params"}
ADAPTER = "voxcap.engine.vllm_adapter"
# whole (every import, lazy ones too): the remote engine's package and what it reaches
VLLM_FREE_ALL = ("voxcap.engine.remote",)
# at import time (module level): what a remote-only install loads before any engine starts
VLLM_FREE_AT_IMPORT = ("voxcap.cli", "voxcap.launcher", "voxcap.engine.factory",
                       "voxcap.app.controller", "voxcap.gui.application", "voxcap.share.server",
                       "voxcap.commands.serve")


class Tree:
    """The modules under a package folder and their imports, resolved to module names."""

    def __init__(self, root: Path):
        self.root = root
        self.files = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}
        self.all: dict[str, list[tuple[int, str]]] = {}
        self.top: dict[str, list[tuple[int, str]]] = {}
        for module, path in self.files.items():
            self.all[module] = [(n, self._resolve(t)) for n, t in self._imports(path, module, False)]
            self.top[module] = [(n, self._resolve(t)) for n, t in self._imports(path, module, True)]

    def _imports(self, path: Path, module: str, top_only: bool) -> list[tuple[int, str]]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = []
        for line, target in imports_of(path, module):
            found.append((line, target))
            node = next(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                        and n.lineno == line)
            if isinstance(node, ast.ImportFrom) and node.module:  # from pkg import module
                found += [(line, f"{target}.{a.name}") for a in node.names
                          if f"{target}.{a.name}" in self.files]
        if not top_only:
            return found
        lines = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines |= {n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                lines |= {n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
        return [(n, t) for n, t in found if n not in lines]

    def _resolve(self, target: str) -> str:
        """``pkg.name`` as imported: the module itself where one exists, else its package."""
        while target and target not in self.files and "." in target:
            if target.startswith(self.root.name + "."):
                target = target.rpartition(".")[0]
            else:
                break
        return target

    def reach(self, start: str, graph: dict) -> dict[str, tuple[str, int, str]]:
        """Every import reachable from ``start``: target -> (importing module, line, target)."""
        seen, todo, out = {start}, [start], {}
        while todo:
            module = todo.pop()
            for line, target in graph.get(module, []):
                out.setdefault(target, (module, line, target))
                if target in self.files and target not in seen:
                    seen.add(target)
                    todo.append(target)
        return out


def _is_type_checking(test) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _heavy(target: str) -> bool:
    return target.split(".")[0] in HEAVY


def vllm_free_violations(root: Path) -> list[str]:
    tree, problems = Tree(root), []
    starts = [(m, tree.all) for m in tree.files if any(
        m == p or m.startswith(p + ".") for p in VLLM_FREE_ALL)]
    starts += [(m, tree.top) for m in VLLM_FREE_AT_IMPORT if m in tree.files]
    for start, graph in starts:
        for target, (module, line, _) in sorted(tree.reach(start, graph).items()):
            if _heavy(target):
                how = "" if graph is tree.all else " at import time"
                problems.append(f"{tree.files[module].relative_to(root.parent)}:{line}: {module} "
                                f"imports {target}{how}, reached from {start}, which must run "
                                "without vLLM and torch")
    return sorted(set(problems))


def adapter_violations(root: Path) -> list[str]:
    tree, problems = Tree(root), []
    for module, path in tree.files.items():
        if module == ADAPTER or module.startswith(ADAPTER + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names, targets = [a.name for a in node.names], [node.module]
            elif isinstance(node, ast.Import):
                names, targets = [], [a.name for a in node.names]
            else:
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}: {module}"
            for target in targets:
                if target.split(".")[0] != "vllm":
                    continue
                if target not in PUBLIC_VLLM:
                    problems.append(f"{where} imports vLLM's internal {target}; only "
                                    f"{ADAPTER.replace('.', '/')}/ may (add it to internals.py)")
                for name in names:
                    if name.startswith("_"):
                        problems.append(f"{where} imports vLLM's private name {name} from {target}")
    return problems


def import_cycles(root: Path) -> list[list[str]]:
    """Each circle among voxcap's modules, as the list of modules around it (Tarjan's SCCs)."""
    tree = Tree(root)
    graph = {m: sorted({t for _, t in tree.all[m] if t in tree.files and t != m}) for m in tree.files}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return out
