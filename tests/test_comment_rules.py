"""The comments and docstrings of voxcap and its tests say why, not history: no issue or session
numbers of this project (git keeps those), and no pointers to notes outside the repository. An
upstream bug (``vLLM issue #N``) is a reason, and stays."""

from __future__ import annotations

import re
from pathlib import Path

import voxcap

PACKAGE = Path(voxcap.__file__).parent
TESTS = Path(__file__).resolve().parent
GENERATED = (PACKAGE / "gui" / "wayland_protocols", TESTS / "support" / "wayland_protocols")

RULES = [
    (re.compile(r"(?<!vLLM )\bissues?[ #]+\d+", re.IGNORECASE),
     "a project issue number: say the reason; the history is in git"),
    (re.compile(r"\b(in|since|from|until|before|after) (session|stop) \d+\b|\bci\d+\b|the old way",
                re.IGNORECASE),
     "history: say what the code does and why"),
    (re.compile(r"shared/design|\.\./shared|\b(engine|audio|gui)-facts\.md|\bproduct\.md"),
     "a note outside the repository: write the fact here (or in docs/)"),
]


def findings() -> list[str]:
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *TESTS.rglob("*.py")]):
        if path == Path(__file__).resolve() or any(g in path.parents for g in GENERATED):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, fix in RULES:
                if pattern.search(line):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {fix}: "
                                 f"{line.strip()}")
    return found


def test_comments_tell_reasons_not_history():
    assert not findings(), "\n".join(findings())


def test_the_rules_catch_what_they_name():
    def caught(text: str) -> bool:
        return any(pattern.search(text) for pattern, _ in RULES)

    assert caught("# issue 29, measured on the H200") and caught("(see shared/design/x.md)")
    assert caught("forces the old way") and caught("ran in session 30")
    assert caught("(issue #21: a 12 GB card)") and caught("see engine-facts.md")
    assert not caught("the fix for vLLM issue #58324") and not caught("(vLLM PR #51167)")
    assert not caught("a session is one stretch of a stream") and not caught("# session 2 token 0")
