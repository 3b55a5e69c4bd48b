"""Capture one application's sound, and only its sound, without changing what the user hears.

The sound server can record a single playback stream: a record stream with a "monitor stream"
(``pa_stream_set_monitor_stream``, ``parec --monitor-stream=N``) receives exactly what that sink
input plays, and nothing else that plays on the same output. PulseAudio and PipeWire's
PulseAudio server both do it; the app's stream is not moved, re-routed or delayed. PortAudio's
ALSA pulse plugin cannot ask for it, so the recording is ``parec`` (pulseaudio-utils), our own
child process (killed with us: PR_SET_PDEATHSIG), writing raw float32 to a pipe.

The application is followed by name: a thread watches the server's stream events and points
``parec`` at the app's newest playing stream whenever it changes (call restarted, new video,
output device changed). Observed differences: PulseAudio ends ``parec`` ("Entity killed") when
the monitored stream ends or moves; PipeWire keeps it open and just sends nothing, so the
follower also stops it when the stream is gone from the list.

While the application plays nothing, silence is delivered at the wall clock's pace, so the
engine's stream keeps moving (its last words come out, it sees the pause) and the capture looks
like any device that is quiet. Notices (through ``on_notice``): waiting for the app, the app
playing again, the app's sound cannot be recorded.
"""

from __future__ import annotations

import logging
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CaptureError
from .apps import AppInfo, find_app, list_apps
from .devices import NO_SERVER_FIX, DeviceInfo, _pulsectl
from .stream import TAG_KEY, RawBlock

log = logging.getLogger(__name__)

RATE, CHANNELS = 48000, 2
PAREC_FIX = ("install the sound server's command-line tools (Debian/Ubuntu: "
             "`apt install pulseaudio-utils`; they work with PipeWire too)")


def app_device(name: str) -> DeviceInfo:
    """The pseudo-device an application capture reports (for stats, events and the journal)."""
    return DeviceInfo(name=f"app:{name}", description=f"{name} (application)", kind="app", is_default=False,
                      rate=RATE, channels=CHANNELS)


def _die_with_parent() -> None:
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Parec:
    """One ``parec --monitor-stream`` process and the thread reading its pipe."""

    def __init__(self, stream_index: int, token: str, block_frames: int,
                 on_data: Callable[[np.ndarray], None]) -> None:
        self.stream_index = stream_index
        self.started = time.monotonic()
        self.got_data = False
        self.proc = subprocess.Popen(
            ["parec", "--raw", "--format=float32le", f"--rate={RATE}", f"--channels={CHANNELS}",
             f"--monitor-stream={stream_index}", "--latency-msec=20", "--client-name=voxcap",
             f"--property={TAG_KEY}={token}", "--property=media.name=voxcap application capture"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent)
        assert self.proc.stdout is not None and self.proc.stderr is not None  # both piped above
        self._out, self._err = self.proc.stdout, self.proc.stderr
        self._bytes = block_frames * CHANNELS * 4
        self._on_data = on_data
        self.thread = threading.Thread(target=self._read, daemon=True, name="voxcap-app-parec")
        self.thread.start()

    def _read(self) -> None:
        while True:
            buf = self._out.read(self._bytes)
            if not buf:
                return
            usable = len(buf) - len(buf) % (CHANNELS * 4)
            if usable:
                if not self.got_data:
                    log.debug("parec for stream %d: first audio after %.2f s", self.stream_index,
                              time.monotonic() - self.started)
                self.got_data = True
                self._on_data(np.frombuffer(buf[:usable], np.float32).reshape(-1, CHANNELS).copy())

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def error(self) -> str:
        try:
            return self._err.read().decode(errors="replace").strip()[-300:]
        except (OSError, ValueError):  # closed meanwhile
            log.warning("cannot read parec's error output", exc_info=True)
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            log.warning("parec (pid %d) did not end after SIGKILL", self.proc.pid, exc_info=True)
        self.thread.join(2)
        self._out.close()
        self._err.close()


class AppRawStream:
    """A ``stream.RawStream`` look-alike whose audio is one application's sound.

    Blocks go to ``out`` as ``RawBlock``s at 48 kHz stereo; silence fills the time the app plays
    nothing (``idle_fill_s`` behind the wall clock; while a stream plays, only once it sent
    nothing for ``stuck_s``, which must stay below the capture watchdog's ``stall_s``). The
    filling has a thread of its own: a look at the server's streams or a parec's start that is
    slow on a loaded machine must not starve the stream into a "stall" (the watchdog's reopen then
    lost what the app played); a follower stuck for ``hung_s`` is left to the watchdog.
    """

    counts_gaps = False  # the app legitimately sends nothing at times: no upstream loss to see

    def __init__(self, app: str, out: queue.Queue[RawBlock], generation: int,
                 block_ms: float = 20.0, token: str = "",
                 on_notice: Callable[[str, str], None] | None = None,
                 idle_fill_s: float = 0.15, stuck_s: float = 1.0, hung_s: float = 10.0) -> None:
        self.app = app
        self.device = app_device(app)
        self.rate, self.channels = RATE, CHANNELS
        self.block_frames = max(16, round(RATE * block_ms / 1000))
        self.generation = generation
        self.token = token
        self._out = out
        self._notice = on_notice or (lambda reason, msg: None)
        self.idle_fill_s, self.stuck_s, self.hung_s = idle_fill_s, stuck_s, hung_s
        self._beat = 0.0  # the follower's last turn
        self._last_data = 0.0
        self.frames = self.callbacks = self.overflows = 0
        self.dropped_blocks = self.dropped_frames = 0
        self.opened_at = self.last_callback = 0.0
        self.finished = threading.Event()
        self.playing = False  # a stream of the app is being recorded now
        self.current: AppInfo | None = None
        self._stop = threading.Event()
        self._lock = threading.RLock()  # _fill pushes under it
        self._parec: _Parec | None = None
        self._t0 = 0.0
        self._pulse: Any = None  # pulsectl.Pulse (untyped), while it follows the application
        self._thread: threading.Thread | None = None
        self._clock: threading.Thread | None = None
        self._state = ""  # "", "waiting", "playing", "failing"
        self._fails = 0
        self._retry_at = 0.0
        self._dirty = False
        self._listening = False

    # ----------------------------------------------------------------------- blocks ----
    def _push(self, data: np.ndarray, now: float) -> None:
        with self._lock:
            wall = time.time()
            self.frames += data.shape[0]
            self.callbacks += 1
            self.last_callback = now
            try:
                self._out.put_nowait(RawBlock(self.generation, RATE, data,
                                              wall - data.shape[0] / RATE, now, self.frames))
            except queue.Full:
                self.dropped_blocks += 1
                self.dropped_frames += data.shape[0]

    def _on_data(self, data: np.ndarray) -> None:  # parec reader thread
        self._last_data = now = time.monotonic()
        self._push(data, now)

    def _fill(self, now: float) -> None:
        """Silence up to the wall clock when the app's audio is that far behind it. Never in
        the middle of a recording that delivers: the server hands a stream's audio over in
        bursts as long as the app's own buffer (paplay's: hundreds of ms), and silence put
        between them would cut its speech apart."""
        if self.playing and now - self._last_data < self.stuck_s:
            return
        with self._lock:  # not between another fill's reading of frames and its pushes
            behind = int((now - self._t0) * RATE) - self.frames
            if behind > self.idle_fill_s * RATE:
                while behind > 0:
                    n = min(behind, self.block_frames)
                    self._push(np.zeros((n, CHANNELS), np.float32), now)
                    behind -= n

    def _tick(self) -> None:
        """Fills on time while the follower may be busy; stops filling when it is stuck."""
        while not self._stop.wait(0.05):
            now = time.monotonic()
            if now - self._beat < self.hung_s and not self.finished.is_set():
                self._fill(now)

    # ----------------------------------------------------------------------- control ----
    def open(self) -> AppRawStream:
        if shutil.which("parec") is None:
            raise CaptureError("Cannot record an application's sound: the `parec` program is "
                               "missing.", PAREC_FIX)
        pulsectl = _pulsectl()
        self._pulse = pulsectl.Pulse("voxcap-app-follow", connect=False)
        try:
            self._pulse.connect(autospawn=False, wait=False)
            self._pulse.event_mask_set("sink_input", "client", "server")
            self._pulse.event_callback_set(self._on_event)
        except Exception as exc:  # noqa: BLE001 (pulsectl's errors all mean "no server")
            self._pulse.close()
            raise CaptureError(f"No sound server is running: {exc}", NO_SERVER_FIX) from None
        self.opened_at = self._t0 = time.monotonic()
        self._follow()  # the first look happens now: "waiting for X" comes before any audio
        self._beat = self._t0
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"voxcap-app-{self.app}")
        self._thread.start()
        self._clock = threading.Thread(target=self._tick, daemon=True,
                                       name=f"voxcap-app-fill-{self.app}")
        self._clock.start()
        return self

    def _on_event(self, ev) -> None:
        self._dirty = True
        if self._listening:  # events also arrive during queries; only end our own wait
            raise _pulsectl().PulseLoopStop

    def _run(self) -> None:
        pulsectl = _pulsectl()
        last = time.monotonic()
        try:
            while not self._stop.is_set():
                self._beat = now = time.monotonic()
                self._listening = True
                try:
                    self._pulse.event_listen(timeout=0.05)
                except pulsectl.PulseDisconnected:
                    log.warning("%s: the sound server went away", self.app)
                    return
                finally:
                    self._listening = False
                p = self._parec
                if self._dirty or now - last > 0.25 or (p is not None and not p.running) or \
                        (p is None and self.current is not None and now >= self._retry_at):
                    self._dirty = False
                    last = now
                    try:
                        self._follow()
                    except pulsectl.PulseDisconnected:
                        raise
                    except Exception:  # a stream vanished mid-listing: look again
                        log.warning("%s: looking for its streams failed; trying again", self.app,
                                    exc_info=True)
                        self._dirty = True
        except pulsectl.PulseDisconnected:
            log.warning("%s: the sound server went away", self.app)
        except Exception:  # the server vanished mid-query, most likely
            log.warning("%s: following the application failed", self.app, exc_info=True)
        finally:
            self._stop_parec()
            self.finished.set()

    def _follow(self) -> None:
        """Point parec at the app's best stream now (or at nothing)."""
        app = find_app(self.app, list_apps(self._pulse, TAG_KEY))
        self.current = app
        best = app.best_stream() if app is not None else None
        p = self._parec
        if p is not None and (best is None or p.stream_index != best.index or not p.running):
            if not p.running and not p.got_data and best is not None and p.stream_index == best.index:
                self._failed(p)
            self._stop_parec()
        if best is None or app is None:  # (no app: no best stream)
            self.playing = False
            self._say("waiting", f"waiting for {self.app}: it plays nothing now"
                      + ("" if app is None else " (paused)") + "; captions resume when it plays")
            return
        now = time.monotonic()
        if self._parec is None and now >= self._retry_at:
            self._parec = _Parec(best.index, self.token, self.block_frames, self._on_data)
            log.debug("%s: recording stream %d (parec pid %d)", self.app, best.index, self._parec.proc.pid)
        self.playing = self._parec is not None and not best.corked
        if self.playing and self._state != "failing":
            self._say("playing", f"capturing {app.title!r} (only this application's sound)")
        if self._parec is not None and self._parec.got_data:
            self._fails = 0
            if self._state == "failing":  # recorded again: say so, or "cannot record" stays up
                self._say("playing", f"capturing {app.title!r} again (only this application's sound)")

    def _failed(self, p: _Parec) -> None:
        self._fails += 1
        log.debug("%s: parec for stream %d ended with %s before any audio (failure %d)", self.app,
                  p.stream_index, p.proc.returncode, self._fails)
        self._retry_at = time.monotonic() + min(5.0, 0.2 * 2 ** self._fails)
        if self._fails == 3:
            err = p.error() or f"parec exited with {p.proc.returncode}"
            log.warning("%s: cannot record stream %d: %s", self.app, p.stream_index, err)
            self._say("failing", f"cannot record {self.app}'s sound ({err}); still trying (if this "
                      f"lasts: restart {self.app}, or caption system audio instead)", force=True)

    def _say(self, state: str, message: str, force: bool = False) -> None:
        if state != self._state or force:
            log.debug("%s: %s -> %s", self.app, self._state or "start", state)
            self._state = state
            self._notice(state, message)

    def _stop_parec(self) -> None:
        p, self._parec = self._parec, None
        if p is not None:
            p.stop()

    @property
    def alive(self) -> bool:
        return self._thread is not None and not self.finished.is_set()

    def silent_for(self, now: float) -> float:
        return now - (self.last_callback or self.opened_at)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(3)
        if self._clock is not None:
            self._clock.join(1)
        self._stop_parec()
        if self._pulse is not None:
            _close(self._pulse)


def _close(pulse) -> None:
    """Close a pulsectl connection (one whose server died may raise)."""
    try:
        pulse.close()
    except Exception:
        log.warning("closing the sound-server connection failed", exc_info=True)
