"""Fixtures of the installer tests: a copy of the checkout, its wheel, a HOME with voxcap
installed (see support/install_helpers.py for how the installs stay offline and quick)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.install_helpers import Home, copy_checkout, new_home


@pytest.fixture(scope="session")
def checkout(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("checkout") / "voxcap")


@pytest.fixture(scope="session")
def wheel(checkout, tmp_path_factory) -> Path:
    """voxcap's wheel, built from the checkout copy without network."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index",
                    "--no-build-isolation", "-q", "-w", str(out), str(checkout)], check=True,
                   capture_output=True, timeout=300)
    (built,) = out.glob("voxcap-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(tmp_path_factory, checkout) -> Home:
    """A HOME with voxcap installed from the checkout (the tests of a module share it and leave
    it installed)."""
    home = new_home(tmp_path_factory, checkout, "home")
    t0 = time.perf_counter()
    result = home.install()
    home.first_install_s = time.perf_counter() - t0
    home.first_install = result
    return home


@pytest.fixture
def immutable_dir(tmp_path):
    """A folder nobody can create files in, root included (chattr +i when running as root)."""
    path = tmp_path / "read-only"
    path.mkdir()
    path.chmod(0o555)
    set_immutable = False
    if os.access(path, os.W_OK):  # root: permissions do not stop it
        r = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if r.returncode != 0:
            path.chmod(0o755)
            pytest.skip(f"cannot make a read-only folder as root here: {r.stderr.decode()[:200]}")
        set_immutable = True
    yield path
    if set_immutable:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    path.chmod(0o755)

