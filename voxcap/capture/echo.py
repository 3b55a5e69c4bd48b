"""Echo-safe "Both": the microphone through the sound server's echo canceller.

On laptop speakers the microphone hears the other side of a call, so "You" would caption "Them"
a second time. The sound server's WebRTC echo canceller removes it: PulseAudio's
``module-echo-cancel``, and PipeWire's echo-cancel module behind the same name in its PulseAudio
server. Both take the reference (what to remove) from their own virtual output ("sink"), which
plays on into the real one: so the streams being captioned as "Them" that play on the speakers
are moved into it (and new ones as they come), and moved back when captioning stops. The user
hears the same thing on the same device, ~10 ms later; nothing else is touched.

On PipeWire 0.3.60 and later the same canceller runs in its monitor form instead (``pw_echo``:
a ``pipewire`` child process, the reference is the output's monitor, nothing is moved), because
the sink form pipewire-pulse loads removed too little echo there; older PipeWire gets the sink
form with a notice that it is weak.

The module is unloaded by ``stop`` (also registered with ``atexit``); if voxcap dies without
it (SIGKILL, a crash), a small reaper process (``module_reaper``) notices the end of its pipe
and unloads it. Should that fail too, the module and its devices carry voxcap's process id in
their names (``voxcap_ec_out_<pid>_<n>``): one whose process is gone is a leftover and is
unloaded the next time an ``EchoCanceller`` starts (``clean_leftovers``).

``mode``: "on", "off", or "auto" (on unless the output is headphones or a headset).
Anything that goes wrong becomes one notice, and the microphone is then captured as it is.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import paths
from ..errors import CaptureError
from .app_stream import _close
from .apps import _is_server_made, app_name_of
from .devices import NO_SERVER_FIX, _pulsectl
from .module_reaper import release_reaper, start_reaper
from .pw_echo import MONITOR_MODE_SINCE, PipeWireEchoProcess, pipewire_version, version_text
from .stream import TAG_KEY

log = logging.getLogger(__name__)

PREFIX = "voxcap_ec_"
MODULE = "module-echo-cancel"
_NAME_RE = re.compile(r"\bsink_name=voxcap_ec_out_(\d+)_\d+\b")
_counter = iter(range(1, 1 << 30))


def is_headphones(sink) -> bool:
    """Whether an output (a pulsectl sink) is headphones or a headset (no echo to cancel)."""
    if sink.proplist.get("device.form_factor", "") in ("headphone", "headset", "hands-free"):
        return True
    port = getattr(sink, "port_active", None)
    text = f"{getattr(port, 'name', '')} {getattr(port, 'description', '')}".casefold()
    return "headphone" in text or "headset" in text


def leftover_modules(pulse) -> list[tuple[int, int]]:
    """(module index, owner pid) of voxcap echo cancellers whose process is gone."""
    out = []
    for m in pulse.module_list():
        match = _NAME_RE.search(m.argument or "") if m.name == MODULE else None
        if match and not paths.pid_alive(int(match.group(1))):
            out.append((int(m.index), int(match.group(1))))
    return out


def clean_leftovers(pulse) -> int:
    """Unload the echo cancellers a crashed voxcap left behind; returns how many."""
    n = 0
    for index, pid in leftover_modules(pulse):
        try:
            pulse.module_unload(index)
            n += 1
            log.warning("unloaded an echo canceller left behind by voxcap process %d", pid)
        except Exception:  # gone meanwhile
            log.warning("could not unload leftover module %d", index, exc_info=True)
    return n


class EchoCanceller:
    """Load the echo canceller for ``mic`` (a source name) referenced to the output ``reference``
    plays on, and keep ``reference``'s streams going through it until ``stop()``.

    ``reference``: "system" (everything on the default output) or "app:NAME" (that
    application's streams). ``on_notice(reason, message)``: one line for the user per problem.
    """

    def __init__(self, mic: str, reference: str, mode: str = "auto",
                 on_notice: Callable[[str, str], None] | None = None, label: str = "You") -> None:
        self.mic = mic
        self.reference = reference
        self.mode = mode
        self.label = label
        self._notice = on_notice or (lambda reason, msg: None)
        tag = f"{os.getpid()}_{next(_counter)}"
        self.source_name = f"{PREFIX}mic_{tag}"
        self.sink_name = f"{PREFIX}out_{tag}"
        self.master = ""
        self.module: int | None = None
        self._pulse: Any = None  # pulsectl.Pulse (untyped), while started
        self._moved: dict[int, int] = {}  # sink input -> the sink it came from
        self._reaper = None
        self._pw: PipeWireEchoProcess | None = None  # the monitor-form canceller on PipeWire
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._listening = False
        self._dirty = True
        self.why_off = ""  # why there is no canceller, in a few words ("" while there is one)

    # ------------------------------------------------------------------------ public ----
    def start(self) -> str | None:
        """The echo-cancelled microphone's source name, or None (mode off, headphones, no
        module...: then a notice said why, except for "off")."""
        if self.mode == "off":
            return None
        pulsectl = _pulsectl()
        self._pulse = pulsectl.Pulse("voxcap-echo-cancel", connect=False)
        try:
            self._pulse.connect(autospawn=False, wait=False)
        except Exception as exc:  # noqa: BLE001
            self._pulse.close()
            self._pulse = None
            raise CaptureError(f"No sound server is running: {exc}", NO_SERVER_FIX) from None
        try:
            return self._start(pulsectl)
        except Exception as exc:
            log.warning("echo cancellation could not start", exc_info=True)
            self.why_off = "it could not start"
            self._say("echo failed", f"echo cancellation could not start ({exc}); the microphone is "
                      "captured as it is, so it may repeat what the speakers play")
            self.stop()
            return None

    def _start(self, pulsectl) -> str | None:
        p = self._pulse
        clean_leftovers(p)
        self.master = p.server_info().default_sink_name or ""
        sink = next((s for s in p.sink_list() if s.name == self.master), None)
        if sink is None:
            self.why_off = "no output device"
            self._say("echo off", "no output device, so no echo to cancel")
            return None
        if self.mode == "auto" and is_headphones(sink):
            log.info("echo cancellation off: %s is headphones", sink.description)
            self.why_off = f"the output {sink.description!r} is headphones"
            self._say("echo off", f"echo cancellation off: the output {sink.description!r} is "
                      "headphones (Settings: echo cancellation \"on\" to force it)")
            return None
        mic = next((s for s in p.source_list() if s.name == self.mic), None)
        if mic is None or mic.monitor_of_sink != 0xFFFFFFFF and \
                any(k.index == mic.monitor_of_sink for k in p.sink_list()):
            self.why_off = f"{self.mic!r} is not a microphone"
            self._say("echo off", f"echo cancellation needs a microphone, and {self.mic!r} is not one")
            return None
        if mic.proplist.get("device.master_device", "") == sink.monitor_source_name:
            # (a remapped monitor used as the microphone: what it "hears" is the output itself)
            self.why_off = f"the microphone records {sink.description!r} itself"
            self._say("echo off", f"echo cancellation off: the microphone records the output "
                      f"{sink.description!r} itself, so there is no echo to remove")
            return None
        desc = mic.description or mic.name
        server = p.server_info().server_name or ""
        weak = ""
        if "pipewire" in server.casefold():
            version = pipewire_version(server)
            if version is not None and version >= MONITOR_MODE_SINCE and shutil.which("pipewire"):
                try:
                    return self._start_pipewire(sink, desc)
                except RuntimeError as exc:  # then the sink form, weak but better than none
                    log.warning("PipeWire's echo canceller did not start", exc_info=True)
                    weak = (f"; it is weak here, because PipeWire's own echo canceller did not start "
                            f"({exc}): use headphones if the other side is captioned twice")
            else:
                weak = (f"; echo cancellation on this PipeWire ({version_text(version)}) is weak: "
                        f"update PipeWire to {version_text(MONITOR_MODE_SINCE)} or later, or use "
                        "headphones")
        args = (f"source_master={self.mic} sink_master={self.master} aec_method=webrtc "
                f"source_name={self.source_name} sink_name={self.sink_name} use_master_format=1 "
                f"{self._aec_args(p)}"
                f"source_properties='device.description=\"{_q(desc)} (echo cancelled by voxcap)\"' "
                f"sink_properties='device.description=\"{_q(sink.description)} (voxcap echo reference)\"'")
        try:
            self.module = int(p.module_load(MODULE, args))
        except pulsectl.PulseError as exc:
            log.warning("loading %s failed", MODULE, exc_info=True)
            self.why_off = "this sound server has no echo canceller"
            self._say("echo unavailable",
                      f"this sound server has no echo canceller ({MODULE}: {exc}); the microphone is "
                      "captured as it is, so on speakers it may repeat the other side",
                      )
            self.module = None
            return None
        atexit.register(self.stop)
        self._reaper = start_reaper(self.module, f"sink_name={self.sink_name}")  # if we crash
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            names = {s.name for s in p.source_list()} | {s.name for s in p.sink_list()}
            if {self.source_name, self.sink_name} <= names:
                break
            time.sleep(0.05)
        else:
            raise CaptureError("the echo canceller's devices did not appear", "")
        p.event_mask_set("sink_input")
        p.event_callback_set(self._on_event)
        self._move_streams()
        self._thread = threading.Thread(target=self._run, daemon=True, name="voxcap-echo-follow")
        self._thread.start()
        log.info("echo cancellation on: %s referenced to %s (%s)", self.mic, self.master, self.reference)
        self._say("echo on", f"echo cancellation on: the microphone without what "
                  f"{sink.description!r} plays ({self.reference_text()}){weak}")
        return self.source_name

    def _start_pipewire(self, sink, mic_desc: str) -> str:
        """PipeWire's canceller in its monitor form (``pw_echo``): the reference is all that
        ``sink`` plays. Raises RuntimeError if it does not start."""
        p = self._pulse
        proc = PipeWireEchoProcess(self.mic, self.master, self.source_name,
                                   f"{mic_desc} (echo cancelled by voxcap)")
        try:
            proc.start(lambda: any(s.name == self.source_name for s in p.source_list()))
        except RuntimeError:
            proc.stop()
            raise
        self._pw = proc
        atexit.register(self.stop)
        log.info("echo cancellation on (PipeWire, monitor form): %s referenced to %s", self.mic, self.master)
        what = "all system audio" if self.reference == "system" else \
            f"all of it, {self.reference_text()} included"
        self._say("echo on", f"echo cancellation on: the microphone without what "
                  f"{sink.description!r} plays ({what})")
        return self.source_name

    @staticmethod
    def _aec_args(p) -> str:
        """No automatic gain control (it would change the near talker's level). PipeWire's
        module takes other arguments (its defaults have no gain control)."""
        if "pipewire" in (p.server_info().server_name or "").casefold():
            return ""
        return "aec_args=\"analog_gain_control=0 digital_gain_control=0\" "

    def reference_text(self) -> str:
        return "all system audio" if self.reference == "system" else self.reference.split(":", 1)[1]

    def stop(self) -> None:
        """Move the streams back, unload the module. Idempotent; safe from any thread."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(3)
        with self._lock:
            p, self._pulse = self._pulse, None
            module, self.module = self.module, None
            pw, self._pw = self._pw, None
        if pw is not None:
            pw.stop()
            log.info("PipeWire's echo canceller stopped")
        if p is None:
            atexit.unregister(self.stop)
            return
        try:
            if module is not None:
                master = next((s for s in p.sink_list() if s.name == self.master), None)
                for si in p.sink_input_list():
                    if si.index in self._moved and master is not None:
                        try:
                            p.sink_input_move(si.index, master.index)
                        except pulsectl_error():  # it ended meanwhile
                            log.warning("could not move stream %d back", si.index, exc_info=True)
                p.module_unload(module)
                log.info("echo canceller unloaded (module %d)", module)
        except Exception:  # server gone: nothing left to unload
            log.warning("unloading the echo canceller failed", exc_info=True)
        finally:
            _close(p)
            reaper, self._reaper = self._reaper, None
            release_reaper(reaper)
        atexit.unregister(self.stop)

    # ---------------------------------------------------------------------- thread ----
    def _on_event(self, ev) -> None:
        self._dirty = True
        if self._listening:
            raise _pulsectl().PulseLoopStop

    def _run(self) -> None:
        pulsectl = _pulsectl()
        while not self._stop.is_set():
            with self._lock:
                p = self._pulse
                if p is None:
                    return
                self._listening = True
                try:
                    p.event_listen(timeout=0.1)
                except pulsectl.PulseDisconnected:
                    log.warning("echo canceller: the sound server went away")
                    return
                finally:
                    self._listening = False
                try:
                    # PipeWire lists a new stream before it is linked to an output and sends
                    # no event once it is: look again at every tick, not only on events
                    self._dirty = False
                    self._move_streams()
                except Exception:  # a stream ended mid-move
                    log.warning("echo canceller: moving a stream failed", exc_info=True)

    def _move_streams(self) -> None:
        """Streams of the reference that play on the master output go through the canceller."""
        p = self._pulse
        sinks = {s.name: s.index for s in p.sink_list()}
        master, ec = sinks.get(self.master), sinks.get(self.sink_name)
        if master is None or ec is None:
            return
        want_app = self.reference.split(":", 1)[1].casefold() if self.reference.startswith("app:") else ""
        for si in p.sink_input_list():
            if si.sink != master or _is_server_made(si) or TAG_KEY in si.proplist:
                continue
            if want_app and want_app not in (app_name_of(si).casefold(),
                                             si.proplist.get("application.process.binary", "").casefold()):
                continue
            try:
                p.sink_input_move(si.index, ec)
                self._moved[int(si.index)] = master
            except Exception:  # ended meanwhile
                log.warning("echo canceller: could not move stream %d", si.index, exc_info=True)

    def _say(self, reason: str, message: str) -> None:
        try:
            self._notice(reason, f"{self.label}: {message}")
        except Exception:  # a broken consumer must not stop the capture
            log.warning("a notice could not be delivered", exc_info=True)


def pulsectl_error():
    return _pulsectl().PulseError


def _q(text: str) -> str:
    """A description safe inside the module's quoted arguments."""
    return re.sub(r"[\"'\\]+", "", text)
