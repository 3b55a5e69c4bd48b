"""Every file pattern pyproject.toml ships with the package matches a file: a pattern that matches
nothing promises what the wheel does not carry (a ``py.typed`` without the type check it stands
for)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_data_pattern_matches_a_file():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["setuptools"]["package-data"]
    assert shipped, "no package data declared: the icons and page.html would be left out"
    empty = [f"{package}/{pattern}" for package, patterns in shipped.items() for pattern in patterns
             if not any((ROOT / package.replace(".", "/")).glob(pattern))]
    assert not empty, f"package-data patterns that match no file: {empty}"
