"""``voxcap serve`` (vLLM's own OpenAI-compatible server, CPU build) on 127.0.0.1 for tests and
benchmarks: the server a person starts for the app, not a test-only command line.

Start-up takes ~40-60 s on 2 cores: start one per test module/session. ``stop()`` is a Ctrl-C
(SIGINT) to ``voxcap serve``, which stops vLLM's server; ``kill()`` is a ``kill -9`` of
``voxcap serve`` alone, after which vLLM's server and its engine core must die by themselves
(PR_SET_PDEATHSIG). ``descendants()`` lists the processes to check for.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

KEY_ENV = "VOXCAP_SERVE_TEST_KEY"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VllmServer:
    """One ``voxcap serve`` child process (its own process group) serving ``model_dir``.

    ``served_name`` is the model name clients give; ``api_key``: the key to require (through
    ``--api-key-env``), or None for the one ``voxcap serve`` generates (read from the key file
    it prints once it is up, into ``api_key``; kept across restarts: same config folder).
    """

    def __init__(self, model_dir, served_name: str = "voxtral-tiny", port: int | None = None,
                 api_key: str | None = None, max_model_len: int = 4096, max_streams: int = 4,
                 env: dict | None = None, log_path: str | Path | None = None,
                 serve_args: list[str] | tuple[str, ...] = ()) -> None:
        self.model_dir = str(model_dir)
        self.serve_args = list(serve_args)  # more of voxcap serve's options (e.g. --gpus 2)
        # the model's weight files when it has them, as a user's server would load them
        self.load_format = "mistral" if (Path(model_dir) / "consolidated.safetensors").is_file() \
            else "dummy"
        self.served_name = served_name
        self.port = port or free_port()
        self.given_key = api_key
        self.api_key = api_key
        self.key_file: Path | None = None
        self.max_model_len = max_model_len
        self.max_streams = max_streams
        self.extra_env = dict(env or {})
        self.log_path = Path(log_path) if log_path else Path(
            tempfile.mkstemp(prefix="voxcap-serve-", suffix=".log")[1])
        self.home = Path(tempfile.mkdtemp(prefix="voxcap-serve-dirs-"))
        # both read by tests after the server stopped: removed when the tests' process ends
        atexit.register(shutil.rmtree, self.home, True)
        if not log_path:
            atexit.register(self.log_path.unlink, missing_ok=True)
        self.server_log = self.home / "state" / "vllm-server.log"  # vLLM's own output
        self.proc: subprocess.Popen | None = None
        self.start_seconds: float | None = None
        self._output_from = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "voxcap.cli", "serve", "--model", self.model_dir,
               "--eager", "--max-model-len", str(self.max_model_len),
               "--max-streams", str(self.max_streams), "--served-model-name", self.served_name,
               "--port", str(self.port)]
        if self.load_format == "dummy":  # the model's weight files when it has them
            cmd.append("--dummy-weights")
        return cmd + (["--api-key-env", KEY_ENV] if self.given_key else []) + self.serve_args

    def start(self, timeout: float = 600.0) -> VllmServer:
        env = dict(os.environ)
        env.update({"VOXCAP_CONFIG_DIR": str(self.home / "config"),
                    "VOXCAP_STATE_DIR": str(self.home / "state"),
                    # vLLM's CPU build pins its worker to core 0 by default: on a shared
                    # 2-core machine every engine then fights over one core
                    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
                    "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1")})
        env.pop("VLLM_API_KEY", None)
        # as a person's shell has it: not what vLLM code run inside the tests' process left there
        # (vLLM's serving modules set it to "spawn" when imported in a test)
        env.pop("VLLM_WORKER_MULTIPROC_METHOD", None)
        if self.given_key:
            env[KEY_ENV] = self.given_key
        env.update(self.extra_env)
        t0 = time.perf_counter()
        # a restart appends to the same file: only what this start prints counts
        self._output_from = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - t0
        return self

    def wait_ready(self, timeout: float) -> None:
        """Until ``voxcap serve`` printed its "Ready" lines (after vLLM's /health answered)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"voxcap serve exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            out = self.output()
            if "Ctrl-C stops the server." in out:
                self._read_key(out)
                return
            time.sleep(0.5)
        raise TimeoutError(f"voxcap serve not ready in {timeout:.0f} s:\n" + self.log_tail())

    def _read_key(self, out: str) -> None:
        if self.given_key:
            return
        marker = "the API key is in "
        line = out[out.rindex(marker) + len(marker):].split("\n", 1)[0]
        self.key_file = Path(line.split(" (", 1)[0])
        self.api_key = self.key_file.read_text().strip()

    def output(self) -> str:
        """What ``voxcap serve`` printed (its stdout and stderr) since its latest start."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._output_from)
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def models(self) -> dict:
        req = urllib.request.Request(f"{self.http_url}/v1/models")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.load(r)

    def descendants(self) -> list[psutil.Process]:
        """``voxcap serve``'s process tree below it: vLLM's server, its engine core, workers."""
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def log_tail(self, lines: int = 40) -> str:
        def tail(path):
            try:
                return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
            except OSError:
                return ""
        return f"{tail(self.log_path)}\n--- vLLM's log:\n{tail(self.server_log)}"

    def kill(self) -> None:
        """SIGKILL ``voxcap serve`` alone (a crash): what it started must go by itself."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> int | None:
        """Ctrl-C (SIGINT) to ``voxcap serve``; SIGKILL to its group if it is not gone within
        ``timeout``. Returns its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        return self.proc.returncode

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
