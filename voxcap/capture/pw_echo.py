"""PipeWire's echo canceller, referenced to the output's monitor, as a child process of voxcap.

pipewire-pulse maps ``module-echo-cancel`` onto PipeWire's echo-cancel module in its "sink" form
(the reference is a virtual output that plays on into the real one). On PipeWire 0.3.65 that form
removed only 6-17 dB of echo in the simulated room of benchmarks/echo_cancel_bench.py, whatever
the WebRTC arguments, channels, rate or quantum (PulseAudio's module: 30 dB). The same module in
its ``monitor.mode`` (PipeWire >= 0.3.60) takes the reference from the output's monitor instead,
in the same graph cycle as the microphone, and removed 36-80 dB with the near talker unchanged
(README, "Echo-safe Both"). pipewire-pulse cannot pass
``monitor.mode``, so voxcap runs the module itself: ``pipewire -c <config>`` is a client of the
user's PipeWire (the way PipeWire's own filter chains run) holding only that module.

The monitor is everything the output plays, so the echo of any sound on it is removed (not only
of the stream being captioned), and nothing is moved. The child dies with voxcap
(PR_SET_PDEATHSIG) and its nodes with it: no leftover survives a crash.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import signal
import subprocess
import time

from .. import paths
from .app_stream import _die_with_parent

log = logging.getLogger(__name__)

PW_MODULE = "libpipewire-module-echo-cancel"
MONITOR_MODE_SINCE = (0, 3, 60)  # the first PipeWire whose echo-cancel module has monitor.mode
_VERSION_RE = re.compile(r"PipeWire (\d+)\.(\d+)\.(\d+)")

# No gain control: it would change the near talker's level (also the module's default).
_CONFIG = """context.properties = {{ log.level = 2 }}
context.spa-libs = {{
    audio.convert.* = audioconvert/libspa-audioconvert
    support.*       = support/libspa-support
}}
context.modules = [
    {{ name = libpipewire-module-rt args = {{ }} flags = [ ifexists nofail ] }}
    {{ name = libpipewire-module-protocol-native }}
    {{ name = libpipewire-module-client-node }}
    {{ name = libpipewire-module-adapter }}
    {{ name = {module}
        args = {{
            monitor.mode = true
            aec.args = {{ webrtc.gain_control = false }}
            capture.props = {{
                node.name = {capture} target.object = {mic} node.dont-reconnect = true
                media.name = "voxcap echo canceller microphone"
            }}
            sink.props = {{
                node.name = {monitor} target.object = {master} node.dont-reconnect = true
                media.name = "voxcap echo canceller reference"
            }}
            source.props = {{ node.name = {source} node.description = {description} }}
        }}
    }}
]
"""


def pipewire_version(server_name: str) -> tuple[int, int, int] | None:
    """(major, minor, micro) from pipewire-pulse's server name ("PulseAudio (on PipeWire 0.3.65)")."""
    m = _VERSION_RE.search(server_name or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def version_text(version: tuple[int, int, int] | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


def config_text(mic: str, master: str, source_name: str, description: str,
                module: str = PW_MODULE) -> str:
    q = json.dumps  # SPA JSON takes JSON strings
    return _CONFIG.format(module=module, mic=q(mic), master=q(master), source=q(source_name),
                          capture=q(f"{source_name}.capture"), monitor=q(f"{source_name}.reference"),
                          description=q(description))


class PipeWireEchoProcess:
    """``pipewire -c`` running the echo canceller whose source is ``source_name``."""

    def __init__(self, mic: str, master: str, source_name: str, description: str) -> None:
        self.source_name = source_name
        # <tmp>/voxcap-ec-<pid>-*: one a killed app left is removed by the next (paths.run_tempdir)
        self._dir = paths.run_tempdir("voxcap-ec-")
        self.config = self._dir / "echo-cancel.conf"
        self.config.write_text(config_text(mic, master, source_name, description, PW_MODULE))
        self.log_path = self._dir / "pipewire.log"
        self.proc: subprocess.Popen | None = None

    def start(self, has_source, timeout: float = 5.0) -> None:
        """Start it and wait until ``has_source()`` (the canceller's source is listed); raises
        RuntimeError naming what went wrong."""
        exe = shutil.which("pipewire")
        if exe is None:
            raise RuntimeError("the `pipewire` program is not installed")
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen([exe, "-c", str(self.config)], stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=out, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"PipeWire's echo canceller exited ({self._log_tail()})")
            if has_source():
                return
            time.sleep(0.05)
        raise RuntimeError(f"PipeWire's echo canceller did not appear in {timeout:g} s "
                           f"({self._log_tail() or 'no message'})")

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _log_tail(self) -> str:
        try:
            lines = [x for x in self.log_path.read_text(errors="replace").splitlines() if x.strip()]
        except OSError:
            return ""
        return " / ".join(lines[-3:])[-400:]

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(3)
            except subprocess.TimeoutExpired:
                log.warning("PipeWire's echo canceller did not stop on SIGTERM; killing it")
                proc.kill()
                proc.wait(3)
        paths.remove_run_tempdir(self._dir)
