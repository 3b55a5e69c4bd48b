"""The captioning states have one definition (``events.Captioning``): no module of voxcap's
spells one as a bare string where a state is compared, set or looked up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from voxcap.events import Captioning, CaptioningState

PACKAGE = Path(__file__).resolve().parents[2] / "voxcap"
STATE_WORDS = {c.value for c in Captioning}
STATE_SETTERS = ("CaptioningState", "_set_state", "move_to")


def _strings(node) -> list[ast.Constant]:
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [n for n in items if isinstance(n, ast.Constant) and n.value in STATE_WORDS]


def _named_state(node) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name.endswith("state")


def bare_states(root: Path) -> list[str]:
    """``file:line`` of each state written as a string: compared with something named
    ``*state``, passed to ``CaptioningState``/``_set_state``/``move_to``, or keying a dict by state."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "events.py" and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            hits: list[ast.Constant] = []
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_named_state(s) for s in sides):
                    hits = [c for s in sides for c in _strings(s)]
            elif isinstance(node, ast.Call) and node.args and getattr(
                    node.func, "attr", getattr(node.func, "id", "")) in STATE_SETTERS:
                hits = _strings(node.args[0])
            elif isinstance(node, ast.Dict) and len(node.keys) > 2 and \
                    len(_strings(ast.Tuple(node.keys))) == len(node.keys):  # keyed by state
                hits = _strings(ast.Tuple(node.keys))
            found += [f"{path.relative_to(root.parent)}:{c.lineno} {c.value!r}" for c in hits]
    return found


def test_captioning_states_are_never_bare_strings_in_voxcap():
    assert bare_states(PACKAGE) == []


def test_a_misspelt_state_is_refused_where_the_event_is_made():
    assert CaptioningState("on").state is Captioning.ON  # the feed's JSON words still work
    with pytest.raises(ValueError):
        CaptioningState("onn")


def test_active_is_a_session_open_and_capturing_is_not_paused():
    capturing = {Captioning.STARTING, Captioning.WAITING, Captioning.ON, Captioning.RESTARTING}
    assert {c for c in Captioning if c.capturing} == capturing
    assert {c for c in Captioning if c.active} == capturing | {Captioning.PAUSED}


def test_every_state_has_its_words_in_the_main_window():
    pytest.importorskip("PySide6")
    from voxcap.gui.main.window import STATE_TEXT

    assert set(STATE_TEXT) == set(Captioning)
