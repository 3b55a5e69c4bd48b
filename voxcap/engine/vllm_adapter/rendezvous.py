"""Where voxcap's vLLM processes meet: vLLM's processes find each other through a file (torch's
FileStore, ``vllm_dist_<random>``) that vLLM 0.32 puts straight in the temporary folder, and a
run that is killed leaves it there, with nothing in it saying whose it was. voxcap's vLLM
processes put theirs in the run's own folder (``VOXCAP_RENDEZVOUS_DIR``: the in-process
engine's or ``voxcap serve``'s, removed when the run ends and by the next start after a
kill), named after the process that made it (``vllm_dist_<pid>_<random>``). Without that
variable they use ``<tmp>/voxcap-<uid>/`` (``paths.private_tmp_dir``: 0700), where those of
processes now gone (killed) are removed when the next one starts; installer/uninstall.sh
removes the folder.

Set by voxcap's vLLM plugin (plugin.py) in each of voxcap's vLLM processes; an engine core
forked from one inherits it."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import uuid
from pathlib import Path

from ... import paths

log = logging.getLogger(__name__)
# vLLM's function, and the executors that took it by name (patched too if already imported)
SOURCE = "vllm.utils.network_utils"
USERS = ("vllm.v1.executor.uniproc_executor", "vllm.v1.executor.multiproc_executor")
NAME = "get_file_store_init_method"


PREFIX = "vllm_dist_"
RENDEZVOUS_DIR_ENV = "VOXCAP_RENDEZVOUS_DIR"  # the run's folder, set by whoever starts vLLM


def rendezvous_dir() -> Path:
    run = os.environ.get(RENDEZVOUS_DIR_ENV)
    return Path(run) if run else Path(tempfile.gettempdir()) / f"voxcap-{os.getuid()}"


def file_store_init_method() -> str:
    return f"file://{rendezvous_dir()}/{PREFIX}{os.getpid()}_{uuid.uuid4().hex}"


def remove_left_behind(folder: Path) -> None:
    """The rendezvous files of voxcap's vLLM processes that are gone (killed: vLLM removes its
    own when it stops)."""
    for old in folder.glob(f"{PREFIX}*_*"):
        pid = old.name[len(PREFIX):].split("_", 1)[0]
        if pid.isdigit() and not paths.pid_alive(int(pid)):
            with contextlib.suppress(OSError):
                old.unlink()


def keep_rendezvous_in_voxcaps_folder() -> bool:
    """vLLM's rendezvous files of this process (and those it forks) in ``rendezvous_dir()``."""
    try:
        if not os.environ.get(RENDEZVOUS_DIR_ENV):  # a run's own folder goes as a whole
            remove_left_behind(paths.private_tmp_dir())
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
