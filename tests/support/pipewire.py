"""A real, headless PipeWire with its PulseAudio server (pipewire-pulse), private to one test
session: the same devices and methods as ``pulse.PulseServer``, on PipeWire.

Four child processes, each with its own runtime directory, HOME and session bus under a temp
dir (nothing of the machine's own session is touched): a private ``dbus-daemon`` (WirePlumber
will not start without a session bus), ``pipewire``, ``wireplumber`` (the session manager: it
links streams to devices and keeps the defaults) and ``pipewire-pulse`` (the PulseAudio
protocol, at ``<dir>/run/pulse/native``). The virtual devices are loaded through that protocol
(``pactl load-module module-null-sink`` ...), exactly as on PulseAudio. All are killed with the
test process (PR_SET_PDEATHSIG) or by ``stop()``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .pulse import MIC, PulseServer, _die_with_parent, _mic_line, _sink_line, _split_args

PROGRAMS = ("dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse")


class PipeWireServer(PulseServer):
    def __init__(self, root: str | Path | None = None) -> None:
        super().__init__(root if root is not None else tempfile.mkdtemp(prefix="voxcap-pw-"))
        self._own_root = root is None
        self.runtime = self.root / "run"
        self.socket = self.runtime / "pulse" / "native"
        self.bus = f"unix:path={self.root}/bus"
        self.procs: list[subprocess.Popen] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("PULSE_SERVER", "PULSE_SOURCE", "PULSE_SINK", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR",
                    "DISPLAY"):
            env.pop(key, None)
        env.update(XDG_RUNTIME_DIR=str(self.runtime), HOME=str(self.root),
                   XDG_CONFIG_HOME=str(self.root / "config"), XDG_STATE_HOME=str(self.root / "state"),
                   DBUS_SESSION_BUS_ADDRESS=self.bus)
        return env

    def env(self) -> dict[str, str]:
        """A client's environment: PULSE_SERVER, and PIPEWIRE_RUNTIME_DIR for PipeWire's own
        clients (voxcap's echo canceller runs ``pipewire -c``)."""
        env = super().env()
        env["PIPEWIRE_RUNTIME_DIR"] = str(self.runtime)
        return env

    def apply_env(self) -> None:
        self._saved_env.setdefault("PIPEWIRE_RUNTIME_DIR", os.environ.get("PIPEWIRE_RUNTIME_DIR"))
        os.environ["PIPEWIRE_RUNTIME_DIR"] = str(self.runtime)
        super().apply_env()

    def start(self, apply_env: bool = True, timeout: float = 20.0) -> PipeWireServer:
        missing = [p for p in PROGRAMS if shutil.which(p) is None]
        if missing:
            raise RuntimeError(f"{', '.join(missing)} not installed: run scripts/setup-dev.sh")
        self.runtime.mkdir(parents=True, exist_ok=True)
        self.runtime.chmod(0o700)
        self._spawn(timeout)
        if apply_env:
            self.apply_env()
        return self

    def _launch(self, *argv: str) -> None:
        log = open(self.root / f"{argv[0]}.log", "ab")  # the child holds it
        self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           env=self._env(), start_new_session=True,
                                           preexec_fn=_die_with_parent))
        log.close()

    def _spawn(self, timeout: float) -> None:
        if self.socket.exists():
            self.socket.unlink()
        self._launch("dbus-daemon", "--session", f"--address={self.bus}", "--nofork", "--nopidfile")
        deadline = time.monotonic() + timeout
        while not (self.root / "bus").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._launch("pipewire")
        while not (self.runtime / "pipewire-0").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._launch("wireplumber")
        self._launch("pipewire-pulse")
        while time.monotonic() < deadline:
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead:
                self.kill()
                raise RuntimeError(f"{dead} exited: see {self.root}/*.log")
            if self.socket.exists() and self._pactl_ok():
                break
            time.sleep(0.05)
        else:
            self.kill()
            raise RuntimeError(f"pipewire-pulse did not come up in {timeout} s")
        for line in (_sink_line("vspeaker"), _sink_line("micfeed"), _mic_line()):
            self.pactl(*_split_args(line))
        while time.monotonic() < deadline:  # WirePlumber takes the defaults once it sees the nodes
            if {"vspeaker.monitor", "micfeed.monitor", MIC[0]} <= set(self.sources()) and \
                    self.pactl("set-default-sink", "vspeaker", check=False) is not None and \
                    "Default Sink: vspeaker" in self.pactl("info"):
                break
            time.sleep(0.1)
        else:
            self.kill()
            raise RuntimeError("PipeWire did not take the virtual devices as defaults")
        self.set_default_source("vspeaker.monitor")

    @property
    def running(self) -> bool:
        return bool(self.procs) and all(p.poll() is None for p in self.procs)

    def kill(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait(timeout=10)
        self.procs = []

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
        self.procs = []
        self.restore_env()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def reset(self) -> None:
        if not self.running:
            self.kill()  # the survivors too: all four start again
        super().reset()
