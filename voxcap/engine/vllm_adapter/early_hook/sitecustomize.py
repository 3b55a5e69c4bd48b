"""Run by Python at start-up in the processes vLLM spawns for a voxcap app (the engine puts this
folder on their PYTHONPATH), before vLLM's imports (tens of seconds): from the first moment, the
process is killed when its parent dies (PR_SET_PDEATHSIG), so an app killed while its engine is
still starting leaves nothing behind. voxcap's vLLM plugin (vllm_adapter/plugin.py) does the rest once
vLLM has loaded. Acts only in multiprocessing's spawned children of a voxcap app; then hands over
to any other sitecustomize on the path."""

import os
import sys


def _die_with_parent() -> None:
    app = os.environ.get("VOXCAP_APP_PID")
    if not app or "--multiprocessing-fork" not in sys.argv:
        return
    expected = int(os.environ.get("VOXCAP_VLLM_PARENT_PID") or app)
    if os.getppid() != expected:
        try:
            os.kill(expected, 0)
        except ProcessLookupError:
            os._exit(1)  # our parent died before we got here: we were re-parented
        except OSError:
            pass
        return  # a process started by something else: not ours to tie
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        return  # not Linux: the vLLM plugin's parent check still applies later
    if os.getppid() != expected:  # it died between the check and the prctl
        os._exit(1)
    err = os.environ.get("VOXCAP_VLLM_STDERR")  # vllm_plugin.redirect_stderr, from the start
    if err:
        try:
            fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(fd, 2)
            os.close(fd)
        except OSError:
            pass  # the plugin tries again, and logs it, once vLLM has loaded


def _next_sitecustomize() -> None:
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if sys.platform.startswith("linux"):
    _die_with_parent()
_next_sitecustomize()
