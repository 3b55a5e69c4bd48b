"""The API key ``voxcap serve`` gives vLLM's server: generated once, kept owner-only (0600).

Two first starts at once (two terminals, a script and a service) must end with one key: the new
key is written whole to a temporary file of its own, which is then linked to the key file's
name, an exclusive create (like ``O_EXCL``: it fails when the name exists) that makes the file
appear with its content, never empty. The start that loses reads the winner's key.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import tempfile
import time
from pathlib import Path

from ..remote.settings import load_api_key, local_server_key_path

log = logging.getLogger(__name__)


def default_key_path() -> Path:
    """The server's key on the GPU box (the app on the other computer reads its copy from
    ``remote_settings.default_api_key_path()``, ``remote-api-key``; on this computer the app
    reads this one)."""
    return local_server_key_path()


def ensure_key(path: Path) -> tuple[str, bool]:
    """(key, created): the key in ``path``, or a new random one created there (0600) if there
    is none; a second start racing this one gets the same key (``created`` False). A file
    others can read, or an empty one, is refused (ConfigError naming the fix)."""
    path = Path(path).expanduser()
    if path.exists():
        return load_api_key(path), False
    key = "vx-" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(key + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            try:
                os.link(tmp, path)  # exclusive: FileExistsError if another start made it first
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: O_EXCL, then the key
                _create_exclusive(path, key)
        except FileExistsError:
            log.info("another start created the API key file %s first: using its key", path)
            return _read_when_written(path), False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    log.info("generated a new API key for vLLM's server in %s", path)
    return key, True


def _create_exclusive(path: Path, key: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (key + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_when_written(path: Path, wait_s: float = 2.0) -> str:
    """The winner's key (created with O_EXCL it may be empty for a moment)."""
    from ...errors import ConfigError

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return load_api_key(path)
        except ConfigError:
            if time.monotonic() > deadline or path.stat().st_size:
                raise
            time.sleep(0.02)
