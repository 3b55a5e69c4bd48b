"""Per-user directories (config, data, cache, state: the log), overridable with VOXCAP_* variables for tests.

``platformdirs`` gives the platform's conventions; without it (``voxcap doctor`` run from a
bare checkout) the XDG base-directory rules are followed, which is what platformdirs does on
Linux too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import tempfile
import time
from pathlib import Path

APP = "voxcap"

log = logging.getLogger(__name__)


def _user_dir(kind: str, xdg_var: str, xdg_fallback: str) -> str:
    """platformdirs' ``user_<kind>_dir`` for voxcap; in a bare interpreter the XDG rules (Linux),
    as platformdirs applies them: ``$xdg_var`` if absolute, else ``~/xdg_fallback``."""
    try:
        import platformdirs
    except ImportError:
        base = os.environ.get(xdg_var, "").strip()
        if not base or not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), xdg_fallback)
        return os.path.join(base, APP)
    return getattr(platformdirs, f"user_{kind}_dir")(APP)


def _dir(env: str, default: str) -> Path:
    return Path(os.environ.get(env) or default).expanduser()


def config_dir() -> Path:
    return _dir("VOXCAP_CONFIG_DIR", _user_dir("config", "XDG_CONFIG_HOME", ".config"))


def data_dir() -> Path:
    return _dir("VOXCAP_DATA_DIR", _user_dir("data", "XDG_DATA_HOME", os.path.join(".local", "share")))


def sessions_root(root: str | Path | None = None) -> Path:
    """Where caption sessions are journalled: ``root``, or the data folder's ``sessions``."""
    return Path(root).expanduser() if root is not None else data_dir() / "sessions"


def cache_dir() -> Path:
    return _dir("VOXCAP_CACHE_DIR", _user_dir("cache", "XDG_CACHE_HOME", ".cache"))


def state_dir() -> Path:
    return _dir("VOXCAP_STATE_DIR", _user_dir("state", "XDG_STATE_HOME", os.path.join(".local", "state")))


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_run_dirs: set[Path] = set()  # this process's run_tempdir folders, removed at exit at the latest
# a run_tempdir folder of any of voxcap's prefixes: <tmp>/voxcap-<words>-<pid>-<mkdtemp's random>
_RUN_TEMPDIR_NAME = re.compile(r"voxcap-(?:[a-z]+-)+(\d+)-[a-z0-9_]+")


def run_tempdir(prefix: str) -> Path:
    """A new temporary folder ``<tmp>/<prefix><pid>-<random>`` for this process, removed at its
    exit (``remove_run_tempdirs``; an app that leaves with ``os._exit`` calls it first). Those
    with the same prefix that processes now gone left behind are removed first (every voxcap
    start removes them all: ``remove_dead_run_tempdirs``)."""
    import atexit

    remove_dead_run_tempdirs(prefix)
    if not _run_dirs:
        atexit.register(remove_run_tempdirs)
    new = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    _run_dirs.add(new)
    return new


def remove_dead_run_tempdirs(prefix: str | None = None) -> int:
    """Remove the ``run_tempdir`` folders (of ``prefix``; None: of any of voxcap's) that
    processes now gone left behind (killed, crashed: no exit handler ran), this user's only:
    the pid in the name says whether their process still lives. Returns how many went."""
    removed = 0
    for old in Path(tempfile.gettempdir()).glob(f"{prefix or 'voxcap-'}*-*"):
        pid = _run_pid(old.name, prefix)
        try:
            mine = old.is_dir() and old.stat().st_uid == os.getuid()
        except OSError:  # removed meanwhile by another start
            continue
        if pid is not None and mine and not pid_alive(pid):
            remove_run_tempdir(old)
            removed += 1
    return removed


def _run_pid(name: str, prefix: str | None) -> int | None:
    if prefix is not None:
        pid = name[len(prefix):].split("-", 1)[0]
    else:
        match = _RUN_TEMPDIR_NAME.fullmatch(name)
        pid = match.group(1) if match else ""
    return int(pid) if pid.isdigit() else None


def remove_run_tempdir(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    _run_dirs.discard(path)


def remove_run_tempdirs() -> None:
    """Remove every folder ``run_tempdir`` made in this process that is still there, and the
    ``private_tmp_dir`` it used if nothing is left in it: this process's mark on the temporary
    folder."""
    for path in list(_run_dirs):
        remove_run_tempdir(path)
    for folder in _private_dirs:
        _remove_if_empty(folder)


_private_dirs: set[Path] = set()  # private_tmp_dir's folders this process used


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty: another run's, or this one's that stays
        folder.rmdir()


def private_tmp_dir() -> Path:
    """``<tmp>/voxcap-<uid>``: this user's own folder (0700) in the shared temporary folder, for
    sockets and files other users must neither read nor plant; made when missing. One that is
    not this user's own folder (another user made it first, or a link) raises PermissionError,
    its message naming the fix. It is removed at this process's exit if nothing is left in it
    (another run's socket keeps it)."""
    import atexit

    folder = Path(tempfile.gettempdir()) / f"voxcap-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PermissionError(f"{folder} is not a folder of this user's (uid {st.st_uid} made it): "
                              "remove it (as root), or set TMPDIR to a folder of your own")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)  # this user's, made wider by hand: narrowed again
    if folder not in _private_dirs:  # this user's own: removed at exit when empty
        _private_dirs.add(folder)
        atexit.register(_remove_if_empty, folder)
    return folder


def write_private(path: Path, data: bytes) -> Path:
    """``data`` as ``path``, readable by its owner only (0600), whole or not at all: written to a
    new file beside it, synced, then renamed over it (a link at ``path`` is replaced, never
    followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def json_object(p: Path, raw: bytes) -> tuple[dict | None, str, str]:
    """(``raw``, the file ``p``'s bytes, as a JSON object, "", ""), or (None, what was wrong,
    where the damaged file went): it is moved aside as ``<name>.corrupt-<time>``, so that
    nothing the person had is overwritten by the defaults."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (UnicodeDecodeError, ValueError) as exc:
        backup = p.with_name(f"{p.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(p, backup)
            where = f"it was kept as {backup}"
        except OSError:
            log.warning("cannot move the damaged %s aside", p, exc_info=True)
            where = "it could not be moved aside"
        return None, str(exc)[:80], where
    return data, "", ""


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
