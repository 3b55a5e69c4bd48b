"""Where voxcap's vLLM processes meet: vLLM's processes find each other through a file (torch's
FileStore, ``vllm_dist_<random>``) that vLLM 0.32 puts straight in the temporary folder, and a
run that is killed leaves it there, with nothing in it saying whose it was. voxcap's vLLM
processes put theirs in ``<tmp>/voxcap-<uid>/`` instead, which installer/uninstall.sh removes.

Set by voxcap's vLLM plugin (plugin.py) in each of voxcap's vLLM processes; an engine core
forked from one inherits it."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import uuid
from pathlib import Path

log = logging.getLogger(__name__)
# vLLM's function, and the executors that took it by name (patched too if already imported)
SOURCE = "vllm.utils.network_utils"
USERS = ("vllm.v1.executor.uniproc_executor", "vllm.v1.executor.multiproc_executor")
NAME = "get_file_store_init_method"


def rendezvous_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"voxcap-{os.getuid()}"


def file_store_init_method() -> str:
    return f"file://{rendezvous_dir()}/vllm_dist_{uuid.uuid4().hex}"


def keep_rendezvous_in_voxcaps_folder() -> bool:
    """vLLM's rendezvous files of this process (and those it forks) in ``rendezvous_dir()``."""
    folder = rendezvous_dir()
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        if folder.stat().st_uid != os.getuid():
            raise PermissionError(f"{folder} belongs to another user")
        import importlib

        importlib.import_module(SOURCE)
    except (OSError, ImportError):
        log.warning("vLLM's rendezvous files stay in the temporary folder", exc_info=True)
        return False
    for name in (SOURCE, *USERS):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, NAME):
            setattr(module, NAME, file_store_init_method)
    return True
