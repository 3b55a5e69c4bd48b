"""One tiny translation package per test session (building one takes ~15 s)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tiny_translation import make_package


@pytest.fixture(scope="session")
def tiny_package(tmp_path_factory) -> Path:
    """A built fr-en package folder; copy it before changing it."""
    return make_package(tmp_path_factory.mktemp("tiny-mt") / "fr_en", "fr", "en")
