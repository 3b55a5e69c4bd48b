"""One PortAudio input stream on one device, and the conversion of its blocks to 16 kHz mono.

The PortAudio callback only copies the block into a bounded queue (with its capture time and a
running frame count); when the queue is full the block is dropped and counted. Everything else
(channel averaging, resampling, gap accounting, delivery) happens on the caller's thread, so a
slow consumer can never make the callback slower than real time (which loses audio with no
flag at all: no input overflow, and the timestamps show no gap).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CaptureError
from ..framing import SAMPLE_RATE
from .devices import DeviceInfo, import_sounddevice, uses_sound_server

TAG_KEY = "voxcap.capture"  # stream property by which voxcap finds its own streams on the server

# The ALSA pulse plugin reads PULSE_SOURCE/PULSE_PROP when a stream opens: opens are serialised.
_OPEN_LOCK = threading.Lock()


@dataclass(frozen=True)
class RawBlock:
    generation: int  # which opening of the stream delivered it (a reopen starts a new one)
    rate: int  # the stream's native rate
    data: np.ndarray  # (frames, channels) float32 at the native rate
    captured_at: float  # time.time() of the first sample
    callback_at: float  # time.monotonic() when the callback ran
    frames_total: int  # frames seen by this stream's callback so far, this block included


def _pulse_portaudio_device(sd) -> int:
    for i, d in enumerate(sd.query_devices()):
        if d["name"] == "pulse" and d["max_input_channels"] > 0:
            return i
    raise CaptureError("PortAudio has no 'pulse' device, so it cannot reach the sound server.",
                       "install the ALSA sound-server plugin (Debian/Ubuntu: `apt install "
                       "libasound2-plugins`; with PipeWire: `apt install pipewire-alsa`)")


class RawStream:
    """A started PortAudio input stream on ``device`` feeding ``out``. Counters are written by
    the callback thread and read by others (plain ints: reads are atomic in CPython)."""

    def __init__(self, device: DeviceInfo, out: queue.Queue[RawBlock], generation: int,
                 block_ms: float = 20.0, token: str = "") -> None:
        self.device = device
        self.rate = int(device.rate) or 48000
        self.channels = max(1, min(int(device.channels) or 2, 8))
        self.block_frames = max(16, round(self.rate * block_ms / 1000))
        self.generation = generation
        self.token = token
        self._out = out
        self.frames = 0
        self.callbacks = 0
        self.overflows = 0
        self.dropped_blocks = 0
        self.dropped_frames = 0
        self.opened_at = 0.0
        self.last_callback = 0.0
        self.finished = threading.Event()
        self._stream: Any = None  # sounddevice.InputStream (untyped), while open

    # --------------------------------------------------------------------- thread: PortAudio ----
    def _callback(self, indata, frames, time_info, status) -> None:
        now = time.monotonic()
        wall = time.time()
        self.frames += frames
        self.callbacks += 1
        self.last_callback = now
        if status.input_overflow:
            self.overflows += 1
        # PortAudio's ADC time of the block (with the ALSA pulse plugin it dates the block's end
        # rather than its start): the first sample is a block's length before it.
        age = time_info.currentTime - time_info.inputBufferAdcTime
        if not 0.0 <= age < 1.0:  # a host API without ADC times
            age = 0.0
        first = wall - age - frames / self.rate
        try:
            self._out.put_nowait(RawBlock(self.generation, self.rate, indata.copy(), first, now,
                                          self.frames))
        except queue.Full:
            self.dropped_blocks += 1
            self.dropped_frames += frames

    def _finished(self) -> None:
        self.finished.set()

    # ------------------------------------------------------------------------------ control ----
    def open(self) -> RawStream:
        """Open and start; raises CaptureError (device gone, server down...)."""
        sd = import_sounddevice()
        with _OPEN_LOCK:
            saved = {k: os.environ.get(k) for k in ("PULSE_SOURCE", "PULSE_PROP")}
            try:
                device: int | str
                if uses_sound_server():
                    device = _pulse_portaudio_device(sd)
                    os.environ["PULSE_SOURCE"] = self.device.name
                    os.environ["PULSE_PROP"] = f"{TAG_KEY}={self.token}"
                else:
                    device = self.device.index if self.device.index >= 0 else self.device.name
                self._stream = sd.InputStream(
                    device=device, samplerate=self.rate, channels=self.channels, dtype="float32",
                    blocksize=self.block_frames, latency="low", callback=self._callback,
                    finished_callback=self._finished)
                self.opened_at = time.monotonic()
                self._stream.start()
            except CaptureError:
                raise
            except Exception as exc:  # noqa: BLE001 (PortAudioError, ValueError: no such device...)
                self.close()
                raise CaptureError(f"Cannot open {self.device.description!r}: {exc}",
                                   "check that the device is connected and the sound server runs") from None
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        return self

    @property
    def alive(self) -> bool:
        s = self._stream
        return s is not None and not self.finished.is_set() and bool(s.active)

    def silent_for(self, now: float) -> float:
        """Seconds since the last callback (or since opening, before the first)."""
        return now - (self.last_callback or self.opened_at)

    def close(self) -> None:
        s, self._stream = self._stream, None
        if s is None:
            return
        with contextlib.suppress(Exception):  # a stream whose server died may refuse both
            s.abort()
        with contextlib.suppress(Exception):
            s.close()


class Converter:
    """Native-rate, multichannel blocks to 16 kHz mono float32: channels averaged (not channel 0),
    then a streaming soxr resampler (state kept across blocks, so no clicks at block edges)."""

    def __init__(self, rate: int, channels: int) -> None:
        self.rate = rate
        self.channels = channels
        self._rs = None
        if rate != SAMPLE_RATE:
            import soxr

            self._rs = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")

    def __call__(self, data: np.ndarray) -> np.ndarray:
        if data.ndim == 2 and data.shape[1] > 1:
            mono = data.mean(axis=1, dtype=np.float32)
        else:
            mono = np.ascontiguousarray(data.reshape(-1), dtype=np.float32)
        if self._rs is None:
            return mono.copy()
        return self._rs.resample_chunk(mono)

    def flush(self) -> np.ndarray:
        if self._rs is None:
            return np.zeros(0, np.float32)
        return self._rs.resample_chunk(np.zeros(0, np.float32), last=True)
