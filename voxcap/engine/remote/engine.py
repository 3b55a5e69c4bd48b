"""The remote engine: captions from a vLLM server's realtime websocket (``/v1/realtime``).

Same interface and events as the in-process engine (``CaptionEngine``), for a desktop without
a suitable GPU or many desks sharing one GPU box. One realtime session per stream (its
messages: ``protocol.py``; connecting, probing and failures explained: ``connection.py``).

Robustness (users rely on the text; losing it silently is the worst failure):

* every sample the server has not turned into text yet is held (``StreamAudio``) and replayed
  into a new session when the connection drops (reconnect with backoff, StreamInterrupted /
  StreamResumed events) or when the server ends a session at its max length (continued at
  once, seamlessly); spans and indices keep counting from the stream's start;
* held audio is bounded (``max_buffer_s``); what is dropped beyond it is reported as StreamGap;
* at most ``max_inflight_s`` of audio is sent ahead of the text: a slow server or network
  backs the audio up on this side, where it is bounded, instead of in unbounded queues there.

Measured, not assumed: the meter's step latency is the client-observed round trip. Step k of
a session needs its first 9,000 samples (at the default delay), then 1,280 more per step;
the latency recorded for step k runs from the moment the append completing that audio is
handed to the websocket (before any wait for the socket to drain) to the moment delta k is
read from it: client queueing + network both ways + the server's queueing and step. Fed in
real time (live captions) that is the lag of the text behind the audio, the number that
decides whether captions keep up; when audio is pushed faster than the server goes (files,
catching up after an outage) it includes the queue ahead of the step (at most
``max_inflight_s``), so it is no step time. The flush steps after the final commit have no
audio of their own: they are counted, not timed. Tokens/s is deltas received per second.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import EngineError
from ...events import (
    EngineReady,
    EngineStopped,
    StreamFinished,
    StreamGap,
    StreamInterrupted,
    StreamResumed,
    TextDelta,
)
from ...framing import SAMPLE_RATE, STEP_SAMPLES, first_step_samples, steps_ready
from ..base import EngineBase, EventSink
from . import protocol
from .audio import StreamAudio, to_pcm16
from .connection import (
    SERVER_FIX,
    Fatal,
    Retry,
    backoff,
    close,
    connect,
    explain_connect_error,
    key_made_meanwhile,
    open_session,
    probe_models,
    probe_realtime,
    receive,
    send,
)
from .settings import RemoteSettings, display_url

log = logging.getLogger(__name__)
GRAPH_MODE = "remote"  # the protocol does not say how the server runs its model
_GAP_REPORT_INTERVAL_S = 2.0


# ------------------------------------------------------------------ streams ----
@dataclass
class _Stream:
    stream_id: str
    label: str
    audio: StreamAudio
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    tokens: int = 0  # deltas over all sessions: the TextDelta index
    close_requested: bool = False
    aborted: bool = False
    final_sent: bool = False  # in the current session
    steps_marked: int = 0  # steps of this session whose clock was started
    sessions: int = 0
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0,
                                                 "sessions": 0})
    last_gap_report: float = 0.0
    lost_reported: int = 0  # samples
    gap_reason: str = "server behind"  # why audio dropped on push now would be lost
    ws: object | None = None
    task: asyncio.Task | None = None
    done: threading.Event = field(default_factory=threading.Event)


class RemoteEngine(EngineBase):
    """Voxtral Realtime on a vLLM server, through its realtime websocket.

    Events go to ``on_event`` (called on the engine's thread: keep it quick) or, if none is
    given, to ``self.events`` (a ``queue.Queue``).
    """

    thread_name = "voxcap-remote"
    what = "The remote engine"
    stops_while_starting = True  # waiting for its server, it stops at once (the controller asks)

    def __init__(self, settings: RemoteSettings, on_event: EventSink | None = None,
                 verbose: bool = False) -> None:
        super().__init__(settings, on_event, verbose)
        self.server_max_model_len: int | None = None
        self._first_step_samples = first_step_samples(settings.delay_ms)
        self._url = display_url(settings.server_url)

    def _prepare(self) -> None:
        """Validate the settings now (ConfigError); connecting happens in the background."""
        self.settings = self.settings.validated()
        self._first_step_samples = first_step_samples(self.settings.delay_ms)
        self._url = self.settings.display_url

    def _start_timeout(self, timeout: float | None) -> tuple[str, str]:
        return (f"The vLLM server at {self._url} did not answer within {timeout:.0f} s.",
                "check the address and the network")

    def _explain(self, exc: BaseException) -> tuple[str, str]:
        if isinstance(exc, (Fatal, Retry)):
            return exc.message, exc.fix
        return super()._explain(exc)

    def _audio_chunk(self, samples: np.ndarray) -> np.ndarray:
        return to_pcm16(samples)

    def usage(self, stream_id: str) -> dict:
        """The server's ``transcription.done`` usage summed over the stream's sessions."""
        st = self._streams.get(stream_id)
        return dict(st.usage) if st else {}

    def buffered_seconds(self, stream_id: str) -> float:
        """Audio held for the server (in flight or waiting): bounded by ``max_buffer_s``."""
        st = self._streams.get(stream_id)
        return st.audio.held / SAMPLE_RATE if st else 0.0

    def lost_seconds(self, stream_id: str) -> float:
        st = self._streams.get(stream_id)
        return st.audio.lost_total / SAMPLE_RATE if st else 0.0

    # ------------------------------------------------------------ engine thread ----
    async def _run(self) -> None:
        self._progress("connecting", self._url)
        max_len = await self._reach_server()
        if max_len is False:
            self._emit(EngineStopped())  # shut down while it waited
            return
        s = self.settings
        self.server_max_model_len = max_len
        notes = [(f"transcription delay assumed {s.delay_ms} ms (the server does "
                  "not report it; only the meter's backlog uses it)")]
        if max_len is None:
            notes.append("the server did not report its max session length; sessions that "
                         "reach it are continued in new ones")
        self._set_ready(EngineReady(
            requested_graph_mode=GRAPH_MODE, resolved_graph_mode=GRAPH_MODE, capture_sizes=(),
            start_seconds=time.perf_counter() - self._t0, device=self._url,
            transcription_delay_ms=s.delay_ms, max_model_len=max_len or 0,
            max_streams=s.max_streams, notes=tuple(notes), server=f"{s.server_model} at {self._url}",
        ), f"{s.server_model} on {self._url}")
        await self._stop_requested()
        for st in list(self._streams.values()):
            if not st.done.is_set():
                await self._abort(st.stream_id)
        tasks = [st.task for st in self._streams.values() if st.task and not st.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self._emit(EngineStopped())

    # ------------------------------------------------------------- start-up probes ----
    async def _reach_server(self) -> int | None | bool:
        """Both probes; a server that cannot be reached (refused, no route, timeout) is tried
        again with backoff for ``start_retry_s``, each wait said ("retrying in N s"), so a
        server started later is picked up. Returns the max session length, or False when the
        engine was shut down meanwhile."""
        give_up = self.settings.start_retry_s
        t0, attempt = time.monotonic(), 0
        while True:
            try:
                served = await probe_models(self.settings, self._url)
                self.settings = replace(self.settings, server_model=served.model)
                self._progress("checking model", served.model)
                await probe_realtime(self.settings, self._url)
                return served.max_model_len
            except Retry as exc:
                waited = time.monotonic() - t0
                if give_up is not None and waited >= give_up:
                    raise Fatal(exc.message, exc.fix) from None
                wait = backoff(attempt)
                attempt += 1
                log.info("%s: %s (retrying in %.1f s)", self.what, exc.message, wait)
                self._progress("waiting for the server", self._url,
                               note=f"{exc.message.rstrip('.')}; retrying in {math.ceil(wait)} s.")
                try:
                    await asyncio.wait_for(self._stop_requested(), wait)
                    return False
                except TimeoutError:
                    self._find_key()
                    continue

    def _find_key(self) -> None:
        """No key when the engine started: the one made or given meanwhile (the server the
        app was pointed at before it first ran on this computer writes its key as it starts)."""
        found = key_made_meanwhile(self.settings)
        if found:
            key, where = found
            log.info("%s: %s", self.what, where)
            self.settings = replace(self.settings, api_key=key)

    # ------------------------------------------------------------- stream tasks ----
    async def _open(self, stream_id: str, label: str) -> None:
        busy = len(self.open_stream_ids())
        if busy >= self.settings.max_streams:
            raise EngineError(f"All {busy} stream slots of the remote engine are in use.",
                              "close a stream first, or allow more streams")
        s = self.settings
        cap = None if s.max_buffer_s is None else int(s.max_buffer_s * SAMPLE_RATE)
        st = _Stream(stream_id, label, StreamAudio(STEP_SAMPLES, cap))
        self._streams[stream_id] = st
        self.stats.open(stream_id, self._first_step_samples, STEP_SAMPLES)
        st.task = asyncio.create_task(self._run_stream(st))

    def _push(self, stream_id: str, pcm: np.ndarray) -> None:
        st = self._streams.get(stream_id)
        if st is None or st.close_requested or st.aborted or st.done.is_set():
            return
        self.stats.audio_in(stream_id, pcm.size)
        st.audio.push(pcm)
        st.gap_reason = "server behind" if st.ws is not None else "disconnected"
        self._report_gap(st, st.gap_reason)
        st.wake.set()

    def _close(self, stream_id: str) -> None:
        st = self._streams.get(stream_id)
        if st is not None:
            st.close_requested = True
            st.wake.set()

    async def _abort(self, stream_id: str) -> None:
        st = self._streams.get(stream_id)
        if st is None or st.done.is_set() or st.aborted:
            return
        st.aborted = True
        st.wake.set()
        if st.task is not None and not st.task.done():
            st.task.cancel()

    def _report_gap(self, st: _Stream, reason: str, force: bool = False) -> None:
        """StreamGap events for the audio lost since the last report (one per interval; at
        most every 2 s unless ``force``)."""
        a = st.audio
        if not a.pending_gaps:
            return
        now = time.monotonic()
        if not force and now - st.last_gap_report < _GAP_REPORT_INTERVAL_S:
            return
        st.last_gap_report = now
        why = ("the server could not be reached" if reason == "disconnected"
               else "the server did not keep up")
        bound = self.settings.max_buffer_s
        for at, n in a.take_lost():
            st.lost_reported += n
            lost, total = n / SAMPLE_RATE, st.lost_reported / SAMPLE_RATE
            self._emit(StreamGap(
                st.stream_id, lost, reason, at / SAMPLE_RATE, total,
                f"{lost:.1f} s of audio at {_clock(at / SAMPLE_RATE)} could not be captioned: "
                f"{why} and at most {bound:g} s is held for it ({total:.1f} s lost in this "
                "stream so far)"))

    async def _run_stream(self, st: _Stream) -> None:
        s = self.settings
        reason, message = "flushed", ""
        outage_since: float | None = None  # set while the server is out of reach
        attempt = 0
        try:
            while True:
                try:
                    ws = await connect(s.realtime_url, s.api_key, s.connect_timeout_s)
                except Retry as exc:
                    if outage_since is None:  # could not even start: an outage too
                        outage_since = time.monotonic()
                        self._emit(StreamInterrupted(st.stream_id, exc.reason, exc.message))
                    if (s.reconnect_give_up_s is not None
                            and time.monotonic() - outage_since > s.reconnect_give_up_s):
                        raise Fatal(f"Lost the vLLM server at {self._url} for "
                                    f"{time.monotonic() - outage_since:.0f} s. {exc.message}",
                                    exc.fix or SERVER_FIX) from None
                    await asyncio.sleep(backoff(attempt))
                    attempt += 1
                    continue
                try:
                    outcome = await self._session(st, ws, resumed=outage_since)
                except Retry as exc:
                    self._end_session(st, "disconnected")
                    if st.ws is not None or outage_since is None:  # a session was running
                        outage_since = time.monotonic()
                        attempt = 0
                        self._emit(StreamInterrupted(
                            st.stream_id, exc.reason, f"{exc.message} Reconnecting; audio "
                            "meanwhile is kept and captioned late."))
                    await asyncio.sleep(backoff(attempt))
                    attempt += 1
                    continue
                finally:
                    st.ws = None
                    await close(ws)
                outage_since, attempt = None, 0
                if outcome == "flushed":
                    break
                # The server ended the session (its max length): continue in a new one at
                # once; what it had not covered yet is replayed, nothing is lost.
                self._end_session(st, "server behind")
                if st.close_requested and not st.audio.unsent:
                    break
        except asyncio.CancelledError:
            reason = "aborted"
        except Fatal as exc:
            reason = "aborted" if st.aborted else "error"
            message = f"{exc.message}\n  fix: {exc.fix}" if exc.fix else exc.message
        except Exception as exc:  # noqa: BLE001 - never a silent hang
            reason = "aborted" if st.aborted else "error"
            message = f"The remote stream failed ({type(exc).__name__})."
        finally:
            st.audio.end_session()
            left = st.audio.unsent_samples / SAMPLE_RATE
            st.audio.unsent.clear()
            if reason == "error" and left > 0:
                message += f"\n  {left:.1f} s of audio held for the server was not captioned"
            self._report_gap(st, st.gap_reason, force=True)
            self.stats.finish(st.stream_id)
            self._emit(StreamFinished(st.stream_id, reason, st.tokens,
                                      st.audio.total_in / SAMPLE_RATE, message))
            st.done.set()

    def _end_session(self, st: _Stream, reason: str) -> None:
        self._report_gap(st, st.gap_reason, force=True)  # earlier drops, under their reason
        st.audio.end_session()
        st.final_sent = False
        st.steps_marked = 0
        self.stats.discard_sent(st.stream_id)
        self._report_gap(st, reason, force=True)

    async def _session(self, st: _Stream, ws, resumed: float | None) -> str:
        """One server session for the stream; returns "flushed" (the stream is done) or
        "continue" (the server ended the session: continue in a new one). Raises Retry when
        the connection drops, Fatal on an error event."""
        from websockets.exceptions import ConnectionClosed

        s = self.settings
        try:
            await open_session(ws, s.server_model, self._url, s.connect_timeout_s)
            await send(ws, protocol.AudioCommit())
        except ConnectionClosed as exc:
            raise explain_connect_error(exc, self._url, s.connect_timeout_s) from None
        except TimeoutError:
            raise Retry("timeout", f"The server at {self._url} did not open a session.") from None
        st.ws = ws
        st.sessions += 1
        if resumed is not None:
            replay = st.audio.unsent_samples / SAMPLE_RATE
            outage = time.monotonic() - resumed
            self._emit(StreamResumed(st.stream_id, outage, replay,
                                     f"Reconnected to {self._url} after {outage:.1f} s; "
                                     f"captioning {replay:.1f} s of held audio late."))
        sender = asyncio.create_task(self._sender(st, ws))
        last_msg = time.monotonic()
        try:
            while True:
                if sender.done() and (error := sender.exception()) is not None:
                    raise error
                try:
                    msg = await receive(ws, 1.0)
                except TimeoutError:
                    pending = st.audio.inflight > 0 or st.final_sent
                    if pending and time.monotonic() - last_msg > s.stall_timeout_s:
                        raise Retry("stalled", f"The server at {self._url} sent nothing for "
                                    f"{s.stall_timeout_s:.0f} s.") from None
                    if not pending:
                        last_msg = time.monotonic()
                    continue
                last_msg = time.monotonic()
                outcome = self._on_message(st, msg)
                if outcome is not None:
                    return outcome
        except ConnectionClosed as exc:
            raise Retry("disconnected", f"Lost the connection to the server at {self._url}.") \
                from exc
        except OSError as exc:
            raise explain_connect_error(exc, self._url, s.connect_timeout_s) from None
        finally:
            sender.cancel()
            try:
                await sender
            except BaseException:  # its error, if any, was raised above
                log.debug("the sender ended", exc_info=True)

    def _on_message(self, st: _Stream, msg: protocol.ServerMessage) -> str | None:
        """Handle one message of the server; the session's outcome once it ended."""
        if isinstance(msg, protocol.TranscriptionDelta):
            self._on_delta(st, msg.delta)
            st.wake.set()  # room in flight for more audio
        elif isinstance(msg, protocol.TranscriptionDone):
            st.usage["sessions"] += 1
            st.usage["prompt_tokens"] += msg.prompt_tokens or 0
            st.usage["completion_tokens"] += msg.completion_tokens or 0
            flushed = st.final_sent and st.audio.covered() and not st.audio.unsent
            return "flushed" if flushed else "continue"
        elif isinstance(msg, protocol.ErrorEvent):
            raise _error_event(msg, self._url, self.settings.server_model)
        return None

    async def _sender(self, st: _Stream, ws) -> None:
        """Audio to the server as it arrives, at most ``max_inflight_s`` ahead of the text."""
        s = self.settings
        a = st.audio
        block = max(1, int(s.append_ms * SAMPLE_RATE / 1000))
        catch_up = max(block, int(s.max_append_s * SAMPLE_RATE))
        max_inflight = int(s.max_inflight_s * SAMPLE_RATE)
        while True:
            room = max_inflight - a.inflight
            want = catch_up if a.unsent_samples > block else block
            pcm = a.take(min(want, room))  # None: nothing unsent, or no room
            if pcm is not None:
                message = protocol.encode(protocol.AudioAppend(pcm))
                self._mark_steps(st)  # before the send: its delta cannot come back first
                await ws.send(message)
                continue
            if st.close_requested and not a.unsent and not st.final_sent:
                st.final_sent = True
                await send(ws, protocol.AudioCommit(final=True))
                return
            st.wake.clear()
            await st.wake.wait()

    def _mark_steps(self, st: _Stream) -> None:
        """Start the clock of each step the audio just handed over makes runnable (step k
        needs the first 9,000 samples of the session, then 1,280 more per step)."""
        ready = steps_ready(st.audio.session_sent, self._first_step_samples)
        while st.steps_marked < ready:
            self.stats.prompt_sent(st.stream_id)
            st.steps_marked += 1

    def _on_delta(self, st: _Stream, text: str) -> None:
        start, end = st.audio.on_token()
        self.stats.token_back(st.stream_id, 1)  # a flush step has no clock: count only
        k = st.tokens
        st.tokens += 1
        self._emit(TextDelta(st.stream_id, text, (), k, start / SAMPLE_RATE, end / SAMPLE_RATE,
                             time.time()))


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


def _error_event(msg: protocol.ErrorEvent, url: str, model: str) -> Fatal:
    if msg.code == protocol.MODEL_NOT_FOUND:
        return Fatal(f"The server at {url} no longer serves the model {model!r}.",
                     "check the server's /v1/models")
    code = msg.code[:60]
    return Fatal(f"The vLLM server reported an error: {msg.error[:300]}"
                 + (f" ({code})" if code else ""),
                 "see the server's log; restart the stream, or the server if it persists")
