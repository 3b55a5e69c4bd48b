"""A real, headless PulseAudio server for tests, private to one test session.

It runs in the foreground as our own child process (so we know its pid and can kill it), with
its own config, socket and runtime directory under a temp dir; nothing depends on HOME or
XDG_RUNTIME_DIR. Devices:

- ``vspeaker``: a virtual speaker (null sink, 48 kHz stereo); its ``vspeaker.monitor`` is "system audio"
  and the default source.
- ``micfeed``: a null sink (48 kHz mono) whose monitor is remapped into ``virtmic``, a virtual microphone:
  whatever is played into ``micfeed`` is "spoken into the microphone".

Every null sink has ``norewinds=1``: without it the first stream after idle gets no data for 1-2 s.

Usage::

    server = PulseServer().start()      # sets PULSE_SERVER in os.environ (apply_env=True)
    server.play(wav, sink="vspeaker")   # paplay, waits until played
    server.unload_sink("vspeaker"); server.load_sink("vspeaker")
    server.kill(); server.restart()
    server.stop()
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

SINKS = {
    # name: (channels, description)
    "vspeaker": (2, "Virtual Speaker"),
    "micfeed": (1, "Mic Feed"),
}
MIC = ("virtmic", "micfeed", "Virtual Microphone")  # source name, master sink, description


def _sink_line(name: str) -> str:
    channels, description = SINKS[name]
    return (f"load-module module-null-sink sink_name={name} norewinds=1 rate=48000 "
            f"channels={channels} sink_properties='device.description=\"{description}\"'")


def _mic_line() -> str:
    name, master, description = MIC
    return (f"load-module module-remap-source master={master}.monitor source_name={name} "
            f"source_properties='device.description=\"{description}\"'")


def _die_with_parent() -> None:
    """In the server's process before exec: SIGKILL it when the test process dies, even by SIGKILL
    (so no orphaned server outlives a crashed test run)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def reinit_portaudio() -> None:
    """Make PortAudio re-read its device list (its ``default`` device routes to PulseAudio only
    if the server was up when PortAudio initialised)."""
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


class PulseServer:
    def __init__(self, root: str | Path | None = None) -> None:
        self._own_root = root is None
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="voxcap-pulse-"))
        self.socket = self.root / "native"
        self.config = self.root / "server.pa"
        self.log = self.root / "pulseaudio.log"
        self.proc: subprocess.Popen | None = None
        self._saved_env: dict[str, str | None] = {}

    # ------------------------------------------------------------------ lifecycle ----
    @property
    def server(self) -> str:
        return f"unix:{self.socket}"

    def env(self) -> dict[str, str]:
        """Environment for a client process of this server (a copy of os.environ plus PULSE_SERVER)."""
        env = dict(os.environ)
        env["PULSE_SERVER"] = self.server
        env.pop("PULSE_SOURCE", None)
        env.pop("PULSE_SINK", None)
        return env

    def start(self, apply_env: bool = True, timeout: float = 10.0) -> PulseServer:
        if shutil.which("pulseaudio") is None:
            raise RuntimeError("pulseaudio is not installed: run scripts/setup-dev.sh")
        (self.root / "runtime").mkdir(parents=True, exist_ok=True)
        (self.root / "state").mkdir(parents=True, exist_ok=True)
        self.config.write_text("\n".join([
            f"load-module module-native-protocol-unix socket={self.socket} auth-anonymous=1",
            _sink_line("vspeaker"),
            _sink_line("micfeed"),
            _mic_line(),
            "set-default-sink vspeaker",
            "set-default-source vspeaker.monitor",
            "",
        ]))
        self._spawn(timeout)
        if apply_env:
            self.apply_env()
        return self

    def _spawn(self, timeout: float) -> None:
        if self.socket.exists():
            self.socket.unlink()
        env = dict(os.environ)
        env.update(PULSE_RUNTIME_PATH=str(self.root / "runtime"), PULSE_STATE_PATH=str(self.root / "state"),
                   HOME=str(self.root))
        env.pop("PULSE_SERVER", None)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["pulseaudio", "-n", "-F", str(self.config), "--daemonize=no", "--exit-idle-time=-1",
                 "--disallow-exit", "--use-pid-file=no", "--log-target=stderr"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                start_new_session=True,  # a Ctrl-C of the tests reaches it only through stop()
                preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"pulseaudio exited with {self.proc.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            if self.socket.exists() and self._pactl_ok():
                missing = {"vspeaker.monitor", "micfeed.monitor", MIC[0]} - set(self.sources())
                if missing:
                    self.kill()
                    raise RuntimeError(f"pulseaudio started without {sorted(missing)}: "
                                       f"{self.log.read_text(errors='replace')[-2000:]}")
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"pulseaudio did not come up in {timeout} s")

    def _pactl_ok(self) -> bool:
        r = subprocess.run(["pactl", "--server", self.server, "info"], capture_output=True, timeout=5,
                           check=False)
        return r.returncode == 0

    def apply_env(self) -> None:
        """Point this process's clients (pulsectl, PortAudio's ALSA pulse plugin) at the server."""
        for key in ("PULSE_SERVER", "PULSE_SOURCE", "PULSE_SINK"):
            self._saved_env.setdefault(key, os.environ.get(key))
        os.environ["PULSE_SERVER"] = self.server
        os.environ.pop("PULSE_SOURCE", None)
        os.environ.pop("PULSE_SINK", None)
        reinit_portaudio()

    def restore_env(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def restart(self, timeout: float = 10.0) -> None:
        """Start the server again on the same socket, with the same devices."""
        self.kill()
        self._spawn(timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        self.restore_env()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PulseServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def reset(self) -> None:
        """Back to the state after ``start()``: server running, every device present, defaults
        set (for fixtures, after a test that unplugged or killed something)."""
        if not self.running:
            self._spawn(10.0)
            return
        present = set(self.sources())
        for sink in SINKS:
            if f"{sink}.monitor" not in present:
                self.load_sink(sink)
        if MIC[0] not in present:
            self.load_sink(MIC[0])
        self.set_default_sink("vspeaker")
        self.set_default_source("vspeaker.monitor")

    # -------------------------------------------------------------------- control ----
    def pactl(self, *args: str, check: bool = True) -> str:
        r = subprocess.run(["pactl", "--server", self.server, *args], capture_output=True, text=True,
                           timeout=10, check=False)
        if check and r.returncode != 0:
            raise RuntimeError(f"pactl {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def _module_index(self, needle: str) -> int | None:
        for line in self.pactl("list", "short", "modules").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3 and needle in parts[2].split():
                return int(parts[0])
        return None

    def unload_sink(self, name: str) -> None:
        """Remove a virtual device as unplugging it would (its monitor goes with it)."""
        if name == MIC[0]:
            idx = self._module_index(f"source_name={name}")
        else:
            idx = self._module_index(f"sink_name={name}")
        if idx is None:
            raise RuntimeError(f"no module for {name}")
        self.pactl("unload-module", str(idx))

    def load_sink(self, name: str) -> None:
        """Plug a virtual device back in (same name and description as at start)."""
        line = _mic_line() if name == MIC[0] else _sink_line(name)
        self.pactl(*_split_args(line))

    def set_default_source(self, name: str) -> None:
        self.pactl("set-default-source", name)

    def set_default_sink(self, name: str) -> None:
        self.pactl("set-default-sink", name)

    def play(self, wav: str | Path, sink: str = "vspeaker", wait: bool = True) -> subprocess.Popen:
        """Play a sound file into ``sink`` with paplay (returns the process; waits for it by default)."""
        proc = subprocess.Popen(["paplay", f"--server={self.server}", f"--device={sink}", str(wav)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env())
        if wait:
            _, err = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise RuntimeError(f"paplay failed: {err.decode(errors='replace').strip()}")
        return proc

    def sources(self) -> list[str]:
        return [line.split("\t")[1] for line in self.pactl("list", "short", "sources").splitlines()]


def _split_args(args: str) -> list[str]:
    """Split module arguments on spaces outside single quotes (pactl takes them as separate argv)."""
    out, cur, quoted = [], "", False
    for ch in args:
        if ch == "'":
            quoted = not quoted
        if ch == " " and not quoted:
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def speech_wav(path: str | Path, text: str, rate: int | None = None) -> Path:
    """Synthesize ``text`` with espeak-ng into ``path`` (22.05 kHz mono; resampled with sox if ``rate``)."""
    path = Path(path)
    raw = path.with_suffix(".espeak.wav") if rate else path
    subprocess.run(["espeak-ng", "-w", str(raw), text], check=True, capture_output=True, timeout=60)
    if rate:
        subprocess.run(["sox", str(raw), "-r", str(rate), str(path)], check=True, capture_output=True,
                       timeout=60)
        raw.unlink()
    return path
