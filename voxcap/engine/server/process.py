"""vLLM's OpenAI-compatible server as a child process that lives and dies with voxcap.

    server = ServerProcess(command, env, log_path).start()   # its output goes to log_path
    server.wait_healthy("127.0.0.1", 8000, timeout=900)      # EngineError if it stopped
    server.wait()                                            # until it exits
    server.stop()                                            # SIGTERM, SIGKILL after a while

How it is tied to voxcap: the child's first act, before Python imports anything else, is to ask
the kernel for SIGKILL when voxcap goes (``PR_SET_PDEATHSIG``, kept across the ``exec`` into
vLLM's server), so a ``kill -9`` of voxcap takes the server with it. It then names itself the
"app" for voxcap's vLLM plugin (``VOXCAP_APP_PID``) and puts the early hook on PYTHONPATH: vLLM's
engine core and workers die with the server the same way (engine/vllm_adapter/plugin.py). The server
runs in a session of its own, so a Ctrl-C typed in voxcap's terminal reaches voxcap only, which
then stops the server (SIGTERM: vLLM shuts its engine down) and waits for it.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from ...die_with_parent import BOOT_PREFIX
from ...errors import EngineError
from ...logs import open_private, private_folder
from ..vllm_adapter.carry import TOKEN_CARRY_ENV
from ..vllm_adapter.plugin import APP_PID_ENV, CHILD_STDERR_ENV, EARLY_HOOK_DIR, PARENT_PID_ENV
from ..vllm_adapter.realtime_carry import REALTIME_CARRY_ENV
from ..vllm_adapter.realtime_input import REALTIME_INPUT_ENV

log = logging.getLogger(__name__)

# argv: [-c, voxcap's pid, program, args...]; BOOT_PREFIX: it dies with voxcap.
_LAUNCHER = (BOOT_PREFIX
             + f"os.environ[{APP_PID_ENV!r}] = str(os.getpid())\n"
             "os.execv(sys.argv[2], sys.argv[2:])\n")
# Set by a voxcap engine for its own vLLM children: the server must not inherit them.
_NOT_INHERITED = ("VLLM_LOGGING_CONFIG_PATH", "VOXCAP_STAGE_FILE", PARENT_PID_ENV, APP_PID_ENV,
                  CHILD_STDERR_ENV)
STOP_TIMEOUT_S = 30.0
FORWARDED_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's: the proxies whose forwarded headers it believes


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """voxcap's environment for the server: ``extra`` on top, the early hook first on
    PYTHONPATH, nothing of an in-process engine's own variables. Unless their variables say 0,
    realtime chunks skip the generic HF processor call (vllm_adapter/realtime_input.py) and the
    engine core can carry tokens. Sending chunks ahead of their tokens through /v1/realtime
    (vllm_adapter/realtime_carry.py) is only on with ``VOXCAP_VLLM_REALTIME_CARRY=1``: a session
    continued past the server's length cap gave other text at the boundary than vLLM's echo
    (tests/engine/remote/test_remote_engine.py), and its capacity gain is not yet shown."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    for fix in (REALTIME_INPUT_ENV, TOKEN_CARRY_ENV):
        env.setdefault(fix, "1")
    env.setdefault(REALTIME_CARRY_ENV, "0")
    env.update(extra)
    # uvicorn (under vLLM's server, which passes it no proxy settings) would take a client on
    # 127.0.0.1 at its word in X-Forwarded-For/-Proto; trusting no address turns that off
    env[FORWARDED_ENV] = ""
    env["PYTHONPATH"] = os.pathsep.join(
        [str(EARLY_HOOK_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


class ServerProcess:
    def __init__(self, command: list[str], env: dict[str, str], log_path: Path) -> None:
        self.command = list(command)
        self.env = env
        self.log_path = Path(log_path)
        self.proc: subprocess.Popen | None = None
        self._log_start = 0

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> ServerProcess:
        """Start it from a thread that lives as long as voxcap (the main thread): the kernel's
        parent-death signal follows the thread that started the child."""
        private_folder(self.log_path.parent)
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with os.fdopen(open_private(self.log_path), "ab") as out:  # it records vLLM's arguments
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *self.command],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                start_new_session=True)
        log.info("vLLM's server started (pid %d, log %s)", self.proc.pid, self.log_path)
        return self

    def follow(self, out) -> threading.Thread:
        """Copy what the server writes to its log onto ``out`` as it comes (``-v``), until it
        exits."""
        def run() -> None:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._log_start)
                while True:
                    chunk = fh.read(65536)
                    if chunk:
                        out.write(chunk.decode("utf-8", errors="replace"))
                        out.flush()
                    elif self.exited() is not None:
                        return
                    else:
                        time.sleep(0.2)
        thread = threading.Thread(target=run, daemon=True, name="voxcap-server-log")
        thread.start()
        return thread

    def exited(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def wait_healthy(self, host: str, port: int, timeout: float, poll_s: float = 0.5) -> None:
        """Return once ``/health`` answers 200; EngineError (with vLLM's last error line) if the
        server stops first or ``timeout`` passes."""
        url = f"http://{_connect_host(host)}:{port}/health"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.exited()
            if code is not None:
                raise EngineError(
                    f"vLLM's server stopped while starting (exit code {code}): {self.last_error()}",
                    f"its whole log is {self.log_path}; `voxcap doctor` checks the set-up")
            try:
                with urllib.request.urlopen(url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:  # not listening yet
                log.debug("vLLM's server not answering yet: %s", exc)
            time.sleep(poll_s)
        raise EngineError(f"vLLM's server did not answer at {url} within {timeout:.0f} s.",
                          f"see its log {self.log_path}; --start-timeout gives it longer")

    def last_error(self) -> str:
        """vLLM's last error line in the log (what a person needs to act on), or its last line."""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            log.warning("cannot read the server's log %s", self.log_path, exc_info=True)
            return "no log"
        lines = [line.strip() for line in lines if line.strip()]
        for line in reversed(lines):
            if "Error" in line and not line.startswith(("File ", "Traceback", "raise ")):
                return line[-300:]
        return lines[-1][-300:] if lines else "no output"

    def wait(self) -> int:
        return self.proc.wait() if self.proc else 0

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (vLLM shuts its engine down), SIGKILL after ``timeout``; its engine core dies
        with it either way. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log.warning("vLLM's server did not stop within %.0f s: killing it", timeout)
                self._signal(signal.SIGKILL)
                self.proc.wait(timeout=30)
        self._signal_group(signal.SIGKILL)  # anything left in its session's group
        return self.proc.returncode

    def kill(self) -> int | None:
        """SIGKILL now (its engine core follows: PR_SET_PDEATHSIG)."""
        if self.proc is None:
            return None
        self._signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._signal_group(signal.SIGKILL)
        return self.proc.returncode

    def _signal(self, sig: int) -> None:
        if self.proc is None:
            return
        try:
            os.kill(self.proc.pid, sig)
        except ProcessLookupError:  # already gone
            log.debug("vLLM's server (pid %d) had already exited", self.proc.pid)

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):  # nothing left in it
            log.debug("nothing left in the server's process group")


def _connect_host(host: str) -> str:
    """Where to reach a server bound to ``host`` from this machine."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host
