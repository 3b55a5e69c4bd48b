"""Per-user directories (config, data, cache), overridable with VOXCAP_* variables for tests."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir, user_config_dir, user_data_dir

APP = "voxcap"


def _dir(env: str, default: str) -> Path:
    return Path(os.environ.get(env) or default).expanduser()


def config_dir() -> Path:
    return _dir("VOXCAP_CONFIG_DIR", user_config_dir(APP))


def data_dir() -> Path:
    return _dir("VOXCAP_DATA_DIR", user_data_dir(APP))


def cache_dir() -> Path:
    return _dir("VOXCAP_CACHE_DIR", user_cache_dir(APP))
