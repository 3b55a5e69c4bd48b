"""Per-user directories (config, data, cache, state: the log), overridable with VOXCAP_* variables for tests.

``platformdirs`` gives the platform's conventions; without it (``voxcap doctor`` run from a
bare checkout) the XDG base-directory rules are followed, which is what platformdirs does on
Linux too.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    from platformdirs import user_cache_dir, user_config_dir, user_data_dir, user_state_dir
except ImportError:  # a bare interpreter: the XDG rules (Linux), as platformdirs applies them
    def _xdg(var: str, fallback: str, app: str) -> str:
        base = os.environ.get(var, "").strip()
        if not base or not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), fallback)
        return os.path.join(base, app)

    def user_config_dir(app: str) -> str:
        return _xdg("XDG_CONFIG_HOME", ".config", app)

    def user_data_dir(app: str) -> str:
        return _xdg("XDG_DATA_HOME", os.path.join(".local", "share"), app)

    def user_cache_dir(app: str) -> str:
        return _xdg("XDG_CACHE_HOME", ".cache", app)

    def user_state_dir(app: str) -> str:
        return _xdg("XDG_STATE_HOME", os.path.join(".local", "state"), app)

APP = "voxcap"


def _dir(env: str, default: str) -> Path:
    return Path(os.environ.get(env) or default).expanduser()


def config_dir() -> Path:
    return _dir("VOXCAP_CONFIG_DIR", user_config_dir(APP))


def data_dir() -> Path:
    return _dir("VOXCAP_DATA_DIR", user_data_dir(APP))


def sessions_root(root: str | Path | None = None) -> Path:
    """Where caption sessions are journalled: ``root``, or the data folder's ``sessions``."""
    return Path(root).expanduser() if root is not None else data_dir() / "sessions"


def cache_dir() -> Path:
    return _dir("VOXCAP_CACHE_DIR", user_cache_dir(APP))


def state_dir() -> Path:
    return _dir("VOXCAP_STATE_DIR", user_state_dir(APP))


def shipped_command(name: str) -> str:
    """How a person runs ``name`` (pip, hf) from voxcap's own environment: the bare name when
    that is what PATH finds, else the full path (the installer puts only `voxcap` on PATH)."""
    import shutil
    import sys

    here = Path(sys.executable).parent / name
    if not here.exists():
        return name
    found = shutil.which(name)
    if found and Path(found).resolve() == here.resolve():
        return name
    return str(here)
