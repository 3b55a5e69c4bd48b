"""The API key ``voxcap serve`` gives vLLM's server: generated once, kept owner-only (0600)."""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

from ..remote.settings import load_api_key, local_server_key_path, save_api_key

log = logging.getLogger(__name__)


def default_key_path() -> Path:
    """The server's key on the GPU box (the app on the other computer reads its copy from
    ``remote_settings.default_api_key_path()``, ``remote-api-key``; on this computer the app
    reads this one)."""
    return local_server_key_path()


def ensure_key(path: Path) -> tuple[str, bool]:
    """(key, created): the key in ``path``, or a new random one written there (0600). A file
    others can read, or an empty one, is refused (ConfigError naming the fix)."""
    if path.exists():
        return load_api_key(path), False
    key = "vx-" + secrets.token_urlsafe(32)
    save_api_key(path, key)
    log.info("generated a new API key for vLLM's server in %s", path)
    return key, True
