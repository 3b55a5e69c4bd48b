"""The module paths tests/support/parallel_groups.py schedules by are real test modules: a module
moved or renamed without its entry there would lose its place (the session engine started on a
second worker, or a long module scheduled last as if it took a second)."""

from __future__ import annotations

from pathlib import Path

from support.parallel_groups import INSTALL_ON_THEIR_OWN, SECONDS, SESSION_ENGINE_MODULES
from support.shared_serve import SHARED_SERVE_MODULES

ROOT = Path(__file__).resolve().parents[1]


def test_every_scheduled_module_exists():
    named = set(SESSION_ENGINE_MODULES) | set(SHARED_SERVE_MODULES) | INSTALL_ON_THEIR_OWN | {
        group for group in SECONDS if group.startswith("tests/")}
    missing = sorted(path for path in named if not (ROOT / path).is_file())
    assert not missing, f"not found (moved? update tests/support/parallel_groups.py): {missing}"
