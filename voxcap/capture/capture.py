"""``Capture``: one source ("system", "mic" or a named device) captured for as long as asked,
through device changes, stalls and sound-server restarts, as 16 kHz mono ``AudioBlock``s.

Three threads per capture:
- PortAudio's callback thread: copies each block into a bounded queue (``stream.RawStream``);
- the processor: averages channels, resamples (soxr), counts gaps, calls ``on_block``;
- the supervisor (the watchdog): watches the sound server's events and the stream's health,
  moves the stream back to the right device when the server moved it silently, reopens a dead
  or stalled stream with backoff, and reports losses. Everything it notices becomes one
  capture event (``voxcap.events``) with a one-line message.

Audio from before and after an interruption goes to the same ``on_block``, so it stays in the
same caption session.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import CaptureError
from ..events import (
    AudioBlock,
    CaptureDeviceChanged,
    CaptureInterrupted,
    CaptureLoss,
    CaptureRecovered,
    CaptureStarted,
    CaptureStopped,
)
from ..framing import SAMPLE_RATE
from .app_stream import AppRawStream
from .devices import DeviceInfo, ServerState, SoundServer, server_state, uses_sound_server
from .echo_keeper import LOST, EchoKeeper
from .sources import APP, DEVICE, MIC, SYSTEM, Resolution, SourceSpec, parse_sources, resolve, resolve_initial
from .stream import TAG_KEY, Converter, RawBlock, RawStream
from .watchdog import Backoff, GapMeter, health

log = logging.getLogger(__name__)

REMIND_EVERY_S = 30.0  # while no audio arrives, say so again this often


@dataclass(frozen=True)

class CaptureStats:
    source: str
    device: str  # description of the device being read ("" while none)
    running: bool  # audio is arriving
    seconds_seen: float  # audio PortAudio handed to the callback (kept + dropped by the queue)
    seconds_delivered: float
    blocks_delivered: int
    dropped_blocks: int  # by the bounded queue (consumer too slow)
    dropped_seconds: float
    overflows: int
    gaps: int
    gap_seconds: float
    interruptions: int


@dataclass
class _Totals:
    """The counters of the streams closed so far."""

    dropped_blocks: int = 0
    dropped_frames_s: float = 0.0
    overflows: int = 0
    seen_s: float = 0.0


class Capture:
    """Capture ``source`` and call ``on_block(AudioBlock)`` (on the capture's own thread) with
    16 kHz mono float32 blocks of ``block_ms``; ``on_event`` gets capture events.

    ``on_block`` may be slow: the queue between PortAudio and it holds ``queue_s`` seconds, then
    drops blocks and reports it (``CaptureLoss`` "queue full").
    """

    def __init__(self, source: SourceSpec | str, on_block: Callable[[AudioBlock], None],
                 on_event: Callable[[object], None] | None = None, *, block_ms: float = 20.0,
                 queue_s: float = 2.0, stall_s: float = 2.0, first_data_s: float = 4.0,
                 backoff_cap_s: float = 1.0, loss_report_s: float = 0.5) -> None:
        if isinstance(source, str):
            specs = parse_sources(source)
            if len(specs) != 1:
                raise CaptureError(f"One Capture captures one source, not {source!r}.",
                                   "make one Capture per source (see capture_sources())")
            source = specs[0]
        self.spec = source
        self.label = source.label or str(source)
        self._on_block = on_block
        self._on_event = on_event or (lambda e: None)
        self.block_ms = block_ms
        self.stall_s, self.first_data_s, self.loss_report_s = stall_s, first_data_s, loss_report_s
        self._backoff = Backoff(0.1, backoff_cap_s)
        self._q: queue.Queue[RawBlock] = queue.Queue(maxsize=max(2, round(queue_s * 1000 / block_ms)))
        self._token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._stream: RawStream | AppRawStream | None = None
        self._generation = 0
        self._kind_hint = ""  # "monitor"/"input": what a named device was, for its fallback
        self._wanted = ""  # description of the device resolved at start
        self.device: DeviceInfo | None = None  # the device being read
        self._server: SoundServer | None = None
        # totals of closed streams + the open one's counters = all-time counters
        self._closed = _Totals()
        self._reported = {"queue full": 0, "overflow": 0}
        self._reported_s = {"queue full": 0.0, "overflow": 0.0, "gap": 0.0}
        self._delivered_samples = 0
        self._blocks = 0
        self._gaps = 0
        self._gap_s = 0.0
        self._gap_reported_s = 0.0
        self._interruptions = 0
        self._down_since: float | None = None  # monotonic: audio stopped arriving
        self._down_reason = ""
        self._last_remind = 0.0
        self._last_audio_at = 0.0  # monotonic time of the last callback of a previous stream
        self._proc_thread: threading.Thread | None = None
        self._watch_thread: threading.Thread | None = None
        self._processor_error: BaseException | None = None
        self._keeper: EchoKeeper | None = None  # "You" through the echo canceller, kept
        self._echo_look = False  # the server changed something: is the canceller still right?

    # ------------------------------------------------------------------------------ public ----
    def start(self, state: ServerState | None = None) -> Capture:
        """Resolve the source and open it (raises CaptureError: no server, unknown device, cannot
        open), then keep it going in the background until ``stop()``."""
        state = state or server_state()
        self.spec, dev = resolve_initial(self.spec, state)
        self._kind_hint = dev.kind
        self._wanted = dev.description
        if self.spec.kind == MIC and self.spec.echo_ref and self.spec.echo != "off":
            self._keeper = EchoKeeper(self.spec, self.label, self._echo_notice)
            try:
                dev = self._keeper.build(dev, server_state)
            except CaptureError:
                self._stop_echo()
                raise
        try:
            stream = self._open(dev)
        except CaptureError:
            self._stop_echo()
            raise
        if self._keeper is not None:
            self._keeper.say(dev)
        self._emit(CaptureStarted(self.label, dev.name, self._words(dev), stream.rate, stream.channels,
                                  f"{self.label}: capturing {dev.description!r} ({stream.rate} Hz, "
                                  f"{stream.channels} ch)"))
        self._connect_server()  # now, not in the first tick: its events are seen from the start
        self._proc_thread = threading.Thread(target=self._process_loop, daemon=True,
                                             name=f"voxcap-capture-proc-{self.label}")
        self._watch_thread = threading.Thread(target=self._supervise_loop, daemon=True,
                                              name=f"voxcap-capture-watch-{self.label}")
        self._proc_thread.start()
        self._watch_thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> CaptureStats:
        """Stop capturing; blocks already captured are still delivered. Returns the totals.
        Idempotent (only the first call reports CaptureStopped)."""
        if self._stop.is_set():
            return self.stats()
        self._stop.set()
        if self._watch_thread is not None:
            self._watch_thread.join(timeout)
        self._close_stream()  # no more audio comes in; the processor drains the queue and ends
        self._stop_echo()
        if self._proc_thread is not None:
            self._proc_thread.join(timeout)
        # blocks the callback dropped after the watcher's last report, before the stream closed
        # (seen: 49 of 50 reported on a loaded machine)
        self._report_losses()
        stats = self.stats()
        self._emit(CaptureStopped(
            self.label, stats.seconds_delivered, stats.dropped_blocks, stats.overflows,
            stats.gap_seconds, stats.interruptions, stopped_words(self.label, stats)))
        return stats

    def stats(self) -> CaptureStats:
        s = self._stream
        dropped = self._closed.dropped_blocks + (s.dropped_blocks if s else 0)
        dropped_s = self._closed.dropped_frames_s + ((s.dropped_frames / s.rate) if s else 0.0)
        overflows = self._closed.overflows + (s.overflows if s else 0)
        seen_s = self._closed.seen_s + ((s.frames / s.rate) if s else 0.0)
        return CaptureStats(self.label, self.device.description if self.device else "",
                            self._down_since is None and s is not None, seen_s,
                            self._delivered_samples / SAMPLE_RATE, self._blocks, dropped, dropped_s,
                            overflows, self._gaps, self._gap_s, self._interruptions)

    @property
    def generation(self) -> int:
        """How many times the stream was opened (1 + reopens)."""
        return self._generation

    # ---------------------------------------------------------------------------- helpers ----
    def _emit(self, event: object) -> None:
        with contextlib.suppress(Exception):  # a broken consumer must not stop the capture
            self._on_event(event)

    def _notice(self, reason: str, message: str) -> None:
        """A notice from an application stream or the echo canceller (one per change)."""
        before = self.device.description if self.device else ""
        msg = message if message.startswith(f"{self.label}:") else f"{self.label}: {message}"
        self._emit(CaptureDeviceChanged(self.label, before, before, reason, msg))

    def _echo_notice(self, reason: str, message: str, words: str) -> None:
        """The echo canceller's news; ``words``: what is read now, as the meter says it."""
        before = self._words(self.device)
        self._emit(CaptureDeviceChanged(self.label, before, words, reason, message))

    def _words(self, dev: DeviceInfo | None) -> str:
        """The device read, in words (with the echo cancelling's state on a kept microphone)."""
        if self._keeper is not None:
            return self._keeper.words(dev)
        return dev.description if dev is not None else ""

    def _stop_echo(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.stop()

    def _resolve(self, state: ServerState) -> Resolution | None:
        """``sources.resolve``, except that an echo-cancelled mic stays on the canceller."""
        res = self._keeper.resolve(state) if self._keeper is not None else None
        return res or resolve(self.spec, state, self._kind_hint)

    def _tend_echo(self, server: SoundServer, now: float) -> None:
        """Build the canceller again when it was lost or listens to an output no longer the
        server's default, and move the stream onto it (supervisor thread)."""
        keeper = self._keeper
        if keeper is None or self._stream is None or (keeper.state != LOST and not self._echo_look):
            return
        self._echo_look = False
        try:
            state = server.state()
            if not keeper.due(state, now):
                return
            mic = keeper.microphone(state, self._kind_hint)
            if mic is None:
                keeper.failed()
                return
            target = keeper.build(mic, server.state)
            mine = server.streams_tagged(TAG_KEY, self._token)
            if mine and mine[0][1] != target.index:
                server.move_stream(mine[0][0], target.index)
        except Exception:  # no server, or it went away mid-query: later
            log.warning("%s: rebuilding the echo canceller failed; trying again", self.label, exc_info=True)
            keeper.failed()
            return
        self.device = target
        if self._stream is not None:
            self._stream.device = target
        keeper.say(target)

    def _open(self, dev: DeviceInfo) -> RawStream | AppRawStream:
        self._generation += 1
        stream: RawStream | AppRawStream
        if self.spec.kind == APP:
            # silence fills a playing stream's wait well before the watchdog would call it
            # stalled (a recording slow to start on a loaded machine): equal, they raced, and a
            # reopen lost the start of what the app played
            stream = AppRawStream(self.spec.name, self._q, self._generation, self.block_ms,
                                  self._token, on_notice=self._notice, stuck_s=self.stall_s / 2)
        else:
            stream = RawStream(dev, self._q, self._generation, self.block_ms, self._token)
        stream.open()  # raises CaptureError
        self._stream = stream
        self.device = dev
        return stream

    def _close_stream(self) -> None:
        s, self._stream = self._stream, None
        if s is None:
            return
        s.close()
        self._closed.dropped_blocks += s.dropped_blocks
        self._closed.dropped_frames_s += s.dropped_frames / s.rate
        self._closed.overflows += s.overflows
        self._closed.seen_s += s.frames / s.rate
        if s.last_callback:
            self._last_audio_at = s.last_callback

    # -------------------------------------------------------------------- thread: processor ----
    def _process_loop(self) -> None:
        converter: Converter | None = None
        last_at = 0.0
        gen = -1
        gaps: GapMeter | None = None
        while True:
            try:
                item = self._q.get(timeout=0.1)
            except queue.Empty:
                if self._stop.is_set() and self._stream is None:
                    if converter is not None:  # the resampler's last few milliseconds
                        self._deliver(converter.flush(), last_at)
                    return
                continue
            try:
                rate = item.rate
                if item.generation != gen or converter is None or gaps is None or \
                        converter.rate != rate or converter.channels != item.data.shape[1]:
                    gen = item.generation
                    converter = Converter(rate, item.data.shape[1])
                    gaps = GapMeter(rate)
                lost = gaps.update(item.callback_at, item.frames_total) if self.spec.kind != APP else 0.0
                if lost:
                    self._gaps += 1
                    self._gap_s += lost
                last_at = item.captured_at + item.data.shape[0] / rate
                self._deliver(converter(item.data), item.captured_at)
            except Exception as exc:  # noqa: BLE001 (a consumer error must not end the capture silently)
                if self._processor_error is None:
                    self._processor_error = exc
                    self._emit(CaptureInterrupted(self.label, "consumer error",
                                                  f"{self.label}: the audio consumer failed: {exc!r}"))

    def _deliver(self, samples, captured_at: float) -> None:
        if samples.size:
            self._delivered_samples += samples.size
            self._blocks += 1
            self._on_block(AudioBlock(self.label, samples, captured_at))

    # ------------------------------------------------------------------- thread: supervisor ----
    def _supervise_loop(self) -> None:
        next_try = 0.0
        next_loss = time.monotonic() + self.loss_report_s
        check_route = True
        while not self._stop.is_set():
            now = time.monotonic()
            # 1. the sound server's connection (Linux): its events reveal silent moves
            if self._connect_server():
                check_route = True
            # 2. the stream's health
            if self._check_health(now):
                next_try = now  # first reopen at once
            # 3. reopen with backoff
            if self._stream is None and now >= next_try and not self._stop.is_set():
                if self._try_reopen(now):
                    self._backoff.reset()
                    check_route = False
                else:
                    next_try = now + self._backoff.next_delay()
            elif self._down_since is not None and now - self._last_remind >= REMIND_EVERY_S:
                self._remind(now, self._down_since)
            # 4. the route: is the stream on the device it should be on?
            if check_route and self._server is not None and self._stream is not None \
                    and self.spec.kind != APP:
                try:
                    self._check_route(self._server)
                except Exception:  # noqa: BLE001 (the server went away mid-query: reconnect)
                    self._drop_server()
                check_route = False
            # 5. the echo canceller: built again when lost or listening to the wrong output
            if self._server is not None:
                self._tend_echo(self._server, now)
            # 6. losses
            if now >= next_loss:
                self._report_losses()
                next_loss = now + self.loss_report_s
            # 7. wait for a server event or the next tick
            if self._server is not None:
                try:
                    came = self._server.wait_event(0.1)
                    check_route = came or check_route
                    self._echo_look = came or self._echo_look
                except CaptureError:  # the server went away, and its echo canceller with it
                    self._drop_server()
                    if self._keeper is not None:
                        self._keeper.lost("the sound server went away")
            else:
                self._stop.wait(0.1)
        self._report_losses()
        self._drop_server()

    def _connect_server(self) -> bool:
        """Connects to the sound server where one is used and not yet connected; whether it
        just did (the route is then checked again)."""
        if not uses_sound_server() or self._server is not None:
            return False
        try:
            self._server = SoundServer(f"voxcap-capture-{self.label}")
            return True
        except CaptureError:
            log.info("%s: the sound server is still away", self.label, exc_info=True)
            return False

    def _check_health(self, now: float) -> bool:
        """Interrupts a stream that stalled or ended (whether it did), or notes its recovery."""
        s = self._stream
        if s is None:
            return False
        why = health(s.alive, s.callbacks, s.silent_for(now), self.stall_s, self.first_data_s)
        if why:
            if why == "stream finished" and uses_sound_server() and not self._server_alive():
                why = "server gone"
            self._interrupt(why, now)
            return True
        if self._down_since is not None and s.callbacks:
            self._recovered(s)
        return False

    def _server_alive(self) -> bool:
        if self._server is None:
            return False
        try:
            self._server.wait_event(0.05)  # processes a pending disconnect
            return True
        except CaptureError:
            self._drop_server()
            return False

    def _drop_server(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def _interrupt(self, reason: str, now: float) -> None:
        log.info("%s: interrupted (%s); reopening", self.label, reason)
        self._close_stream()
        if reason == "server gone" and self._keeper is not None:
            self._keeper.lost("the sound server went away")
        if self._down_since is None:
            self._down_since = self._last_audio_at or now
            self._down_reason = reason
            self._last_remind = now
            self._interruptions += 1
            what = {"stream finished": "the stream ended",
                    "stalled": f"no audio for {self.stall_s:.0f} s",
                    "server gone": "the sound server went away",
                    "device gone": "no suitable device is left"}.get(reason, reason)
            self._emit(CaptureInterrupted(self.label, reason,
                                          f"{self.label}: audio stopped ({what}): reconnecting"))

    def _remind(self, now: float, down_since: float) -> None:
        self._last_remind = now
        self._emit(CaptureInterrupted(self.label, self._down_reason,
                                      f"{self.label}: still no audio after {now - down_since:.0f} s: "
                                      "still trying"))

    def _try_reopen(self, now: float) -> bool:
        try:
            state = self._server.state() if self._server is not None else server_state()
        except Exception:  # noqa: BLE001 (no server, or it went away mid-query)
            self._drop_server()
            return False
        res = self._resolve(state)
        if res is None:
            return False
        try:
            self._open(res.device)
        except CaptureError:
            log.info("%s: reopening %s failed", self.label, res.device, exc_info=True)
            return False
        dev = res.device
        if self._down_since is None:  # a planned reopen, not an outage
            return True
        if res.fallback:
            self._emit(CaptureDeviceChanged(
                self.label, self._wanted, self._words(dev), "lost",
                f"{self.label}: {self._wanted!r} is gone: capturing {dev.description!r} until it returns"))
        return True

    def _recovered(self, s: RawStream | AppRawStream) -> None:
        outage = max(0.0, time.monotonic() - self._down_since) if self._down_since else 0.0
        dev = s.device
        self._down_since = None
        self._emit(CaptureRecovered(self.label, dev.name, self._words(dev), outage,
                                    f"{self.label}: capturing again from {self._words(dev)!r} after "
                                    f"{outage:.1f} s without audio"))

    def _check_route(self, server: SoundServer) -> None:
        """Put the stream on the device it should be on, and say so when that changes."""
        state = server.state()
        res = self._resolve(state)
        if res is None:
            # nothing of the right kind is left: better no audio than the wrong audio (the
            # server may have moved a "You" stream onto system audio)
            self._interrupt("device gone", time.monotonic())
            return
        mine = server.streams_tagged(TAG_KEY, self._token)
        if not mine:
            return  # not registered yet, or being torn down: the health check handles it
        so_index, src_index = mine[0]
        actual = next((d for d in state.devices if d.index == src_index), None)
        target, before = res.device, self.device
        if actual is None or actual.name != target.name:
            server.move_stream(so_index, target.index)
        self.device = target
        if self._stream is not None:
            self._stream.device = target
        if before is None or before.name == target.name:
            return  # (moved away by the server and straight back by us: nothing changed)
        if res.fallback or state.device(before.name) is None:
            reason = "lost"
            msg = f"{self.label}: {before.description!r} is gone: now capturing {target.description!r}"
            if self.spec.kind == DEVICE:
                msg += " until it returns"
        elif self.spec.kind == DEVICE and target.name == self.spec.name:
            reason = "returned"
            msg = f"{self.label}: {target.description!r} is back: capturing it again"
        elif self.spec.kind in (SYSTEM, MIC):
            reason = "default changed"
            what = "output" if self.spec.kind == SYSTEM else "input"
            msg = f"{self.label}: the default {what} changed: now capturing {target.description!r}"
        else:
            reason = "moved"
            msg = f"{self.label}: now capturing {target.description!r}"
        self._emit(CaptureDeviceChanged(self.label, self._words(before), self._words(target), reason, msg))

    def _report_losses(self) -> None:
        st = self.stats()
        for kind, count, seconds in (("queue full", st.dropped_blocks, st.dropped_seconds),
                                     ("overflow", st.overflows, 0.0)):
            new = count - self._reported[kind]
            if new <= 0:
                continue
            new_s = seconds - self._reported_s[kind]
            self._reported[kind] = count
            self._reported_s[kind] = seconds
            self._emit(CaptureLoss(self.label, kind, new, new_s, seconds,
                                   loss_words(self.label, kind, new_s, seconds, count)))
        new_gap = st.gap_seconds - self._gap_reported_s
        if new_gap > 0:
            self._gap_reported_s = st.gap_seconds
            self._emit(CaptureLoss(self.label, "gap", 0, new_gap, st.gap_seconds,
                                   loss_words(self.label, "gap", new_gap, st.gap_seconds, 0)))


def capture_sources(text: str) -> list[SourceSpec]:
    """``--source`` text to the captures it means (two for "both")."""
    return parse_sources(text)


__all__ = ["DEVICE", "MIC", "SYSTEM", "Capture", "CaptureStats", "capture_sources"]


def stopped_words(label: str, stats) -> str:
    """The end of a capture in plain words: what was lost, if anything (the counters stay on
    the event for the meter and the tests)."""
    def times(n: int) -> str:
        return "once" if n == 1 else f"{n} times"
    lost = []
    if stats.dropped_blocks or stats.gap_seconds >= 0.005:
        lost.append(f"{stats.gap_seconds:.2f} s of sound lost")
    if stats.overflows:
        lost.append(f"the sound system fell behind {times(stats.overflows)}")
    if stats.interruptions:
        lost.append(f"the sound was cut off {times(stats.interruptions)}")
    return (f"{label}: stopped after {stats.seconds_delivered:.1f} s of audio"
            + (f" ({', '.join(lost)})" if lost else ", none lost"))


def loss_words(label: str, kind: str, new_s: float, total_s: float, count: int) -> str:
    """Audio lost while capturing, in plain words (``kind``: "queue full", "overflow", "gap")."""
    if kind == "queue full":
        return (f"{label}: {new_s:.2f} s of sound lost: voxcap fell behind reading it "
                f"({total_s:.2f} s so far)")
    if kind == "overflow":
        times = "once" if count == 1 else f"{count} times"
        return f"{label}: the sound system lost some sound ({times} so far)"
    return f"{label}: {new_s:.2f} s of sound never arrived ({total_s:.2f} s so far)"
