"""A vLLM general plugin (entry point ``vllm.general_plugins``), run in every vLLM process.

It does two things in each process vLLM starts for a voxcap app (``VOXCAP_APP_PID`` is set by
the engine before vLLM spawns anything), and nothing elsewhere:

- **Ctrl-C stays with the app.** A Ctrl-C typed in a terminal goes to the whole foreground
  process group, and vLLM's engine core shuts down on SIGINT: the engine would die just when
  the app wants it to flush the last words. Each child therefore moves into its own process
  group; the app handles Ctrl-C itself (flush, then exit).
- **Children die with their parent, however it dies.** Leaving the group also takes away the
  usual way children die with it, and a ``kill -9``, a crash or a logout gives vLLM no chance
  to stop them: an engine core would keep ~18 GB of GPU memory until found and killed. Each
  child asks the kernel for SIGKILL when its parent goes (``PR_SET_PDEATHSIG``); the chain
  app → engine core → workers then unwinds within moments. The GPU driver frees a dead
  process's memory. vLLM loads plugins only after its imports (tens of seconds on a GPU
  machine), so the engine also puts ``early_hook/`` on its children's PYTHONPATH: its
  sitecustomize.py does the same from the first moment of each spawned process. A child vLLM
  *forks* from the app (the default: engine/inprocess/engine.py) gets both at once from an at-fork hook
  (``tie_forked_children``), since it starts with the plugins already loaded.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from pathlib import Path

from .rendezvous import keep_rendezvous_in_voxcaps_folder

APP_PID_ENV = "VOXCAP_APP_PID"
# Where a vLLM child of the app writes its stderr (tracebacks, warnings, progress bars) unless
# the app runs verbose: the terminal shows voxcap's one line, the app logs this file's tail.
CHILD_STDERR_ENV = "VOXCAP_VLLM_STDERR"
PARENT_PID_ENV = "VOXCAP_VLLM_PARENT_PID"  # the pid a vLLM child expects as its parent
_PR_SET_PDEATHSIG = 1

log = logging.getLogger(__name__)


EARLY_HOOK_DIR = Path(__file__).with_name("early_hook")  # its sitecustomize.py: see there


def detach_from_terminal() -> None:
    app = os.environ.get(APP_PID_ENV)
    if not app:
        return  # not started by voxcap
    if str(os.getpid()) == app:
        keep_rendezvous_in_voxcaps_folder()  # what a killed run leaves, in voxcap's folder
        # the app itself, or the vLLM server `voxcap serve` started (engine/server/process.py):
        # an engine core it forks gets no plugin call of its own (vLLM loads plugins once per
        # process, and a fork inherits "loaded"), so the at-fork hook ties it
        tie_forked_children()
        return
    expected = int(os.environ.get(PARENT_PID_ENV) or app)
    if not _child_of(expected):
        return  # a vLLM started by something else that inherited the variable: leave it be
    keep_rendezvous_in_voxcaps_folder()
    try:
        if os.getpgid(0) != os.getpid():
            os.setpgid(0, 0)
    except OSError:  # not permitted here (e.g. a session leader): keep the old behaviour
        log.warning("vLLM process %d could not leave the terminal's process group", os.getpid(),
                    exc_info=True)
    die_with_parent(expected)
    redirect_stderr()


def redirect_stderr() -> None:
    """Send this process's stderr (fd 2) to $VOXCAP_VLLM_STDERR, appending, if set."""
    path = os.environ.get(CHILD_STDERR_ENV)
    if not path:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        log.warning("vLLM process %d keeps the terminal's stderr", os.getpid(), exc_info=True)
        return
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


_fork_hook_registered = False


def tie_forked_children() -> None:
    """From now on, every child this process forks while it runs a voxcap engine (APP_PID set to
    this process) leaves the terminal's group and dies with it, like a spawned one. Forks done
    by ``subprocess`` run no at-fork hooks: they are exec'd programs with their own handling."""
    global _fork_hook_registered
    if not _fork_hook_registered:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook_registered = True


def _after_fork_in_child() -> None:
    app = os.environ.get(APP_PID_ENV)
    if app and os.getppid() == int(os.environ.get(PARENT_PID_ENV) or app):
        _leave_stdin_alone()
        detach_from_terminal()
        from .patches import log_inherited

        log_inherited()


def _leave_stdin_alone() -> None:
    """A forked child gets a sys.stdin of its own (/dev/null). The inherited one may be locked
    for good: a thread of the app blocked reading it holds its lock, and the fork copies the
    lock, not the thread; multiprocessing's start-up then closes sys.stdin and waits for ever
    (seen: a forked engine core stuck in buffered_close while the test app read its commands)."""
    try:
        sys.stdin = open(os.devnull, encoding="utf-8")  # the child's for good
    except OSError:
        log.warning("vLLM process %d keeps the app's stdin", os.getpid(), exc_info=True)


def _child_of(expected_parent: int) -> bool:
    """Whether this process is ``expected_parent``'s child; exit now if that parent is gone
    (we were re-parented: the app died before this process got here)."""
    if os.getppid() == expected_parent:
        return True
    try:
        os.kill(expected_parent, 0)
    except ProcessLookupError:
        os._exit(1)
    except OSError:  # alive, not ours to signal
        pass
    return False


def die_with_parent(expected_parent: int) -> None:
    """SIGKILL this process when its parent exits; exit now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        except OSError:
            log.warning("vLLM process %d will not die with voxcap", os.getpid(), exc_info=True)
    # The parent may have died between spawning us and the prctl: then we were re-parented.
    if os.getppid() != expected_parent:
        os._exit(1)
    # Processes this one starts (vLLM's workers) expect it as their parent.
    os.environ[PARENT_PID_ENV] = str(os.getpid())
