"""A simulated room for echo-cancellation measurements, on a test sound server (pulse.py or
pipewire.py): what the virtual speaker plays reaches the virtual microphone like speakers heard
by a laptop's microphone, and a separate "near" talker speaks into the microphone.

    path = AcousticPath(server).start()  # vspeaker.monitor -> micfeed: -6 dB, 50 ms (module-loopback)
    result = measure(server, "on", far_wavs, near_wav)   # echo and near-talker levels in "You"
    path.stop()

The echo is measured in the "You" stream while "Them" speech plays and nobody speaks near the
microphone; the near talker while only it speaks (and, with ``double_talk``, while both
speak). Comparing ``measure(..., "on")`` with ``measure(..., "off")`` gives the echo reduction and
the near talker's change, in dB.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .capture_helpers import Recorder
from .xcorr import rms


class AcousticPath:
    def __init__(self, server, delay_ms: int = 50, gain_db: float = -6.0) -> None:
        self.server, self.delay_ms, self.gain_db = server, delay_ms, gain_db
        self.module: int | None = None

    def start(self) -> AcousticPath:
        s = self.server
        self.module = int(s.pactl("load-module", "module-loopback", "source=vspeaker.monitor",
                                  "sink=micfeed", f"latency_msec={self.delay_ms}",
                                  "source_dont_move=true", "sink_dont_move=true").strip())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            idx = self._sink_input()
            if idx is not None:
                s.pactl("set-sink-input-volume", str(idx), f"{self.gain_db:g}dB")
                return self
            time.sleep(0.05)
        raise RuntimeError("the loopback's stream did not appear")

    def _sink_input(self) -> int | None:
        """The loopback's playback stream (into micfeed)."""
        out = self.server.pactl("list", "sink-inputs")
        for block in out.split("Sink Input #")[1:]:
            idx = int(block.split("\n", 1)[0])
            if (f"Owner Module: {self.module}\n" in block or f'pulse.module.id = "{self.module}"' in block
                    or "loopback" in block.lower() and "micfeed" in block):
                return idx
        return None

    def stop(self) -> None:
        if self.module is not None:
            self.server.pactl("unload-module", str(self.module), check=False)
            self.module = None


@dataclass(frozen=True)
class EchoLevels:
    mode: str
    echo_rms: float  # "You" while only "Them" speaks
    near_rms: float  # "You" while only the near talker speaks
    echo_active: bool  # the canceller was really in the path
    double_gain: float | None = None  # the near talker's amplitude in "You" while both talk

    def db(self, value: float) -> float:
        return 20 * math.log10(max(value, 1e-9))


def _segment(server, rec: Recorder, wav, sink: str) -> np.ndarray:
    start = rec.mark()
    server.play(wav, sink=sink)
    time.sleep(0.4)  # the loopback's delay and the pipeline's tail
    return rec.audio(start)


def _double_talk(server, rec: Recorder, far_wav, near_wav) -> float:
    """The near talker's gain in "You" while "Them" talks too (by correlation with what the
    near talker said: the echo left over does not correlate with it)."""
    from .xcorr import load_16k, match

    start = rec.mark()
    far = server.play(far_wav, sink="vspeaker", wait=False)
    time.sleep(0.3)
    server.play(near_wav, sink="micfeed")
    far.wait(60)
    time.sleep(0.4)
    return match(load_16k(near_wav), rec.audio(start)).gain


def measure(server, mode: str, warmup_wavs, far_wav, near_wav, double_talk: bool = False) -> EchoLevels:
    """Levels in "You" with echo cancellation ``mode`` ("on"/"off"), through a ``Capture``;
    ``double_talk``: also the near talker's gain while both talk."""
    from voxcap.capture import Capture
    from voxcap.capture.sources import MIC, SourceSpec

    rec = Recorder()
    cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo=mode), rec.on_block,
                  rec.on_event).start()
    try:
        active = cap.device is not None and cap.device.name.startswith("voxcap_ec_")
        rec.wait_audio(0.3)
        for wav in warmup_wavs:  # the canceller adapts to the room
            server.play(wav, sink="vspeaker")
        echo = _segment(server, rec, far_wav, "vspeaker")
        near = _segment(server, rec, near_wav, "micfeed")
        both = _double_talk(server, rec, far_wav, near_wav) if double_talk else None
    finally:
        cap.stop()
    return EchoLevels(mode, rms(echo), rms(near), active, both)
