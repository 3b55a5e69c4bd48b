"""The remote engine: captions from a vLLM server's realtime websocket (``/v1/realtime``).

Same interface and events as the in-process engine (``CaptionEngine``), for a desktop without
a suitable GPU or many desks sharing one GPU box. One websocket session per stream:
``session.update {model}``, ``input_audio_buffer.commit`` (starts generation), PCM16 base64
``input_audio_buffer.append`` blocks as audio arrives, ``commit {final: true}`` on close; the
server answers ``transcription.delta`` per decoding step, ``transcription.done {usage}`` at the
end, ``error {error, code}`` on errors (protocol: shared/design/engine-facts.md).

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

The API key is sent as a bearer token only; it is never put into a message, an event, an
exception or a log record (websockets logs request headers at DEBUG: its logger here
redacts them).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import random
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace

import numpy as np

from ... import __version__, logs
from ...errors import ConfigError, EngineError
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
from .audio import StreamAudio, to_pcm16
from .settings import RemoteSettings, display_url, find_api_key, models_url

log = logging.getLogger(__name__)
KEY_FIX = ("give the key the server was started with: `voxcap serve` printed its file; copy it to "
           "~/.config/voxcap/remote-api-key (chmod 600), or use --api-key-file PATH or "
           "--api-key-env VAR")

GRAPH_MODE = "remote"  # the protocol does not say how the server runs its model
_GAP_REPORT_INTERVAL_S = 2.0
_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0)
_PROBE_WAIT_S = 5.0
_SERVER_FIX = ("start it on the computer with the GPU: `voxcap serve --model FOLDER` prints its "
               "address; or check the host and port in --server")


# ------------------------------------------------------------------ errors ----
class _Fatal(Exception):
    """The stream (or the start-up) cannot go on: message + fix for a person."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message, self.fix = message, fix


class _Retry(Exception):
    """The connection is gone or could not be made; worth trying again later."""

    def __init__(self, reason: str, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.reason, self.message, self.fix = reason, message, fix


def explain_connect_error(exc: BaseException, url: str, timeout: float) -> _Fatal | _Retry:
    """A person's reading of a failure to connect to ``url`` (already safe to show)."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

    if isinstance(exc, (_Fatal, _Retry)):
        return exc
    if isinstance(exc, InvalidStatus):
        code = exc.response.status_code
        if code == 401:
            return _Fatal(f"The server at {url} refused the connection (HTTP 401): a missing "
                          "or wrong API key.",
                          KEY_FIX)
        if code in (403, 404):  # vLLM (Starlette) answers 403 to a websocket on an unknown path
            return _Fatal(f"No realtime endpoint at {url} (HTTP {code}).",
                          "give the server's base address, e.g. ws://gpu-box:8000 (voxcap adds "
                          "/v1/realtime); the server must serve a Voxtral Realtime model")
        if code >= 500 or code == 429:
            return _Retry("server error", f"The server at {url} answered HTTP {code}.",
                          "see the server's log")
        return _Fatal(f"The server at {url} refused the websocket (HTTP {code}).",
                      "check the address: is it a vLLM server?")
    if isinstance(exc, InvalidURI):
        return _Fatal(f"The server address {url} is not a valid websocket URL.",
                      "e.g. --server ws://gpu-box:8000")
    if isinstance(exc, ConnectionRefusedError):
        return _Retry("refused", f"Cannot connect to the vLLM server at {url}: connection "
                      "refused (nothing listens there).", _SERVER_FIX)
    if isinstance(exc, socket.gaierror):
        return _Retry("host not found", f"Cannot find the server host of {url}.",
                      "check the host name in --server and the network")
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return _Retry("timeout", f"The server at {url} did not answer within {timeout:.0f} s.",
                      "check the address, the network and any firewall")
    if isinstance(exc, ssl.SSLError):
        return _Fatal(f"The TLS handshake with {url} failed ({exc.reason or 'SSL error'}).",
                      "use ws:// for a server without TLS, or give it a trusted certificate")
    if isinstance(exc, ConnectionClosed):
        return _Retry("disconnected", f"The server at {url} closed the connection.",
                      "see the server's log")
    if isinstance(exc, InvalidHandshake):
        return _Fatal(f"The server at {url} did not answer as a websocket server "
                      f"({type(exc).__name__}).", "check the address and port: is it the vLLM "
                      "server?")
    if isinstance(exc, OSError):
        why = exc.strerror or type(exc).__name__
        return _Retry("network", f"Cannot connect to the vLLM server at {url}: {why}.",
                      _SERVER_FIX)
    return _Retry("error", f"Connecting to {url} failed ({type(exc).__name__}).", "")


class _RedactHeaders(logging.Filter):
    """websockets logs each handshake header at DEBUG: never the Authorization header. It logs
    every frame too (audio, caption text): only when the person asked for text in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in ("> %s", "< %s") and not logs.text_allowed():
            return False
        args = record.args
        if isinstance(args, tuple) and len(args) >= 2 and isinstance(args[0], str) \
                and args[0].lower() in ("authorization", "proxy-authorization"):
            record.args = (args[0], "<redacted>") + tuple(args[2:])
        return True


_ws_logger = logging.getLogger("voxcap.engine.remote.engine.websocket")
_ws_logger.addFilter(_RedactHeaders())


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
        self._first_step_samples = first_step_samples(settings.transcription_delay_ms)
        self._url = display_url(settings.server_url)

    def _prepare(self) -> None:
        """Validate the settings now (ConfigError); connecting happens in the background."""
        self.settings = self.settings.validated()
        self._first_step_samples = first_step_samples(self.settings.transcription_delay_ms)
        self._url = self.settings.display_url

    def _start_timeout(self, timeout: float | None) -> tuple[str, str]:
        return (f"The vLLM server at {self._url} did not answer within {timeout:.0f} s.",
                "check the address and the network")

    def _explain(self, exc: BaseException) -> tuple[str, str]:
        if isinstance(exc, (_Fatal, _Retry)):
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
        notes = [(f"transcription delay assumed {s.transcription_delay_ms} ms (the server does "
                  "not report it; only the meter's backlog uses it)")]
        if max_len is None:
            notes.append("the server did not report its max session length; sessions that "
                         "reach it are continued in new ones")
        self._set_ready(EngineReady(
            requested_graph_mode=GRAPH_MODE, resolved_graph_mode=GRAPH_MODE, capture_sizes=(),
            start_seconds=time.perf_counter() - self._t0, device=self._url,
            transcription_delay_ms=s.transcription_delay_ms, max_model_len=max_len or 0,
            max_streams=s.max_streams, notes=tuple(notes), server=f"{s.model} at {self._url}",
        ), f"{s.model} on {self._url}")
        await self._stop_async.wait()
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
                max_len = await self._probe_models()
                self._progress("checking model", self.settings.model)
                await self._probe_realtime()
                return max_len
            except _Retry as exc:
                waited = time.monotonic() - t0
                if give_up is not None and waited >= give_up:
                    raise _Fatal(exc.message, exc.fix) from None
                wait = _backoff(attempt)
                attempt += 1
                log.info("%s: %s (retrying in %.1f s)", self.what, exc.message, wait)
                self._progress("waiting for the server", self._url,
                               note=f"{exc.message.rstrip('.')}; retrying in {math.ceil(wait)} s.")
                try:
                    await asyncio.wait_for(self._stop_async.wait(), wait)
                    return False
                except TimeoutError:
                    self._find_key()
                    continue

    def _find_key(self) -> None:
        """No key when the engine started: the one made or given meanwhile, as the app and the
        CLI find it (find_api_key). The server the app was pointed at before it first ran on
        this computer writes its key as it starts (issue 34: HTTP 401 once it was up)."""
        if self.settings.api_key is not None:
            return
        try:
            key, where = find_api_key(self.settings.server_url)
        except ConfigError:  # a key file others can read: the probe's refusal says it
            return
        if key:
            log.info("%s: %s", self.what, where)
            self.settings = replace(self.settings, api_key=key)

    async def _probe_models(self) -> int | None:
        """GET /v1/models: is the model served there, and its max session length.

        A server without the route (a proxy exposing only the websocket) is not an error;
        the websocket probe decides then.
        """
        s = self.settings
        url = models_url(s.server_url)
        timeout = s.connect_timeout_s

        def fetch():
            req = urllib.request.Request(url, headers={"User-Agent": f"voxcap/{__version__}"})
            if s.api_key:
                req.add_unredirected_header("Authorization", f"Bearer {s.api_key}")
            try:
                with urllib.request.urlopen(req, timeout=timeout) as r:
                    return r.status, r.read(1 << 20)
            except urllib.error.HTTPError as e:
                return e.code, b""

        try:
            status, body = await asyncio.to_thread(fetch)
        except urllib.error.URLError as e:  # _Retry (refused, no route, timeout) or _Fatal
            reason = e.reason if isinstance(e.reason, BaseException) else OSError(str(e.reason))
            raise explain_connect_error(reason, self._url, timeout) from None
        except (OSError, TimeoutError) as e:
            raise explain_connect_error(e, self._url, timeout) from None
        if status in (401, 403):
            raise _Fatal(f"The server at {self._url} refused the API key (HTTP {status})"
                         if s.api_key else
                         f"The server at {self._url} requires an API key (HTTP {status}).",
                         KEY_FIX)
        models: dict = {}
        if status == 200:
            try:
                data = json.loads(body)
                models = {m["id"]: m for m in data.get("data", []) if isinstance(m, dict)}
            except (ValueError, KeyError, TypeError, AttributeError):
                models = {}
        if not s.model:  # "the server's only model"
            if len(models) != 1:
                listed = (f"it serves {', '.join(sorted(models)[:5])}" if models
                          else "it does not list its models")
                raise _Fatal(f"Which model of the server at {self._url}? ({listed}).",
                             "name it with --server-model NAME")
            self.settings = replace(s, model=next(iter(models)))
            s = self.settings
        if models and s.model not in models:
            served = ", ".join(sorted(models)[:5])
            raise _Fatal(f"The server at {self._url} does not serve the model {s.model!r} "
                         f"(it serves: {served}).", f"use --server-model {min(models)}")
        max_len = models.get(s.model, {}).get("max_model_len")
        return int(max_len) if isinstance(max_len, int) and max_len > 0 else None

    async def _probe_realtime(self) -> None:
        """Open the realtime websocket and check the model. The server acknowledges a good
        ``session.update`` with silence, so an unknown event follows it: its error reply says
        the update was handled (events are handled in order)."""
        ws = await self._connect()  # _Retry when it cannot be reached
        try:
            await self._handshake(ws)
            await ws.send(json.dumps({"type": "voxcap.probe"}))
            deadline = time.monotonic() + _PROBE_WAIT_S
            while (left := deadline - time.monotonic()) > 0:
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), left))
                except TimeoutError:
                    break  # no complaint about the model
                if msg.get("type") == "error":
                    if msg.get("code") == "model_not_found":
                        raise _Fatal(f"The server at {self._url} does not serve the model "
                                     f"{self.settings.model!r}.",
                                     "give the name in the server's /v1/models "
                                     "(--served-model-name, or the path it was started with)")
                    break  # the probe's own "unknown event": the model was accepted
        except _Fatal:
            raise
        except Exception as exc:  # noqa: BLE001
            err = explain_connect_error(exc, self._url, self.settings.connect_timeout_s)
            raise _Fatal(err.message, err.fix) from None
        finally:
            await self._close_ws(ws)

    # ------------------------------------------------------------------ websocket ----
    async def _connect(self):
        from websockets.asyncio.client import connect

        s = self.settings
        headers = {"Authorization": f"Bearer {s.api_key}"} if s.api_key else None
        try:
            return await connect(
                s.realtime_url, additional_headers=headers, open_timeout=s.connect_timeout_s,
                ping_interval=20, ping_timeout=20, close_timeout=2, max_size=2**22,
                user_agent_header=f"voxcap/{__version__}", logger=_ws_logger)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is explained
            raise explain_connect_error(exc, display_url(s.realtime_url),
                                        s.connect_timeout_s) from None

    async def _handshake(self, ws) -> None:
        msg = json.loads(await asyncio.wait_for(ws.recv(), self.settings.connect_timeout_s))
        if msg.get("type") != "session.created":
            raise _Fatal(f"The server at {self._url} did not open a realtime session "
                         f"(it sent {str(msg.get('type'))[:40]!r}).",
                         "check the address: is it a vLLM server with a realtime model?")
        await ws.send(json.dumps({"type": "session.update", "model": self.settings.model}))

    @staticmethod
    async def _close_ws(ws) -> None:
        try:
            await asyncio.wait_for(ws.close(), 3)
        except BaseException:  # noqa: BLE001 - closing a dead socket
            log.debug("closing a websocket failed", exc_info=True)

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
                    ws = await self._connect()
                except _Retry as exc:
                    if outage_since is None:  # could not even start: an outage too
                        outage_since = time.monotonic()
                        self._emit(StreamInterrupted(st.stream_id, exc.reason, exc.message))
                    if (s.reconnect_give_up_s is not None
                            and time.monotonic() - outage_since > s.reconnect_give_up_s):
                        raise _Fatal(f"Lost the vLLM server at {self._url} for "
                                     f"{time.monotonic() - outage_since:.0f} s. {exc.message}",
                                     exc.fix or _SERVER_FIX) from None
                    await asyncio.sleep(_backoff(attempt))
                    attempt += 1
                    continue
                try:
                    outcome = await self._session(st, ws, resumed=outage_since)
                except _Retry as exc:
                    self._end_session(st, "disconnected")
                    if st.ws is not None or outage_since is None:  # a session was running
                        outage_since = time.monotonic()
                        attempt = 0
                        self._emit(StreamInterrupted(
                            st.stream_id, exc.reason, f"{exc.message} Reconnecting; audio "
                            "meanwhile is kept and captioned late."))
                    await asyncio.sleep(_backoff(attempt))
                    attempt += 1
                    continue
                finally:
                    st.ws = None
                    await self._close_ws(ws)
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
        except _Fatal as exc:
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
        "continue" (the server ended the session: continue in a new one). Raises _Retry when
        the connection drops, _Fatal on an error event."""
        from websockets.exceptions import ConnectionClosed

        s = self.settings
        try:
            await self._handshake(ws)
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        except ConnectionClosed as exc:
            raise explain_connect_error(exc, self._url, s.connect_timeout_s) from None
        except TimeoutError:
            raise _Retry("timeout", f"The server at {self._url} did not open a session.") from None
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
                if sender.done() and sender.exception() is not None:
                    raise sender.exception()
                try:
                    raw = await asyncio.wait_for(ws.recv(), 1.0)
                except TimeoutError:
                    pending = st.audio.inflight > 0 or st.final_sent
                    if pending and time.monotonic() - last_msg > s.stall_timeout_s:
                        raise _Retry("stalled", f"The server at {self._url} sent nothing for "
                                     f"{s.stall_timeout_s:.0f} s.") from None
                    if not pending:
                        last_msg = time.monotonic()
                    continue
                last_msg = time.monotonic()
                try:
                    msg = json.loads(raw)
                except (ValueError, TypeError):
                    continue
                kind = msg.get("type")
                if kind == "transcription.delta":
                    self._on_delta(st, str(msg.get("delta") or ""))
                    st.wake.set()  # room in flight for more audio
                elif kind == "transcription.done":
                    usage = msg.get("usage") or {}
                    st.usage["sessions"] += 1
                    for k in ("prompt_tokens", "completion_tokens"):
                        if isinstance(usage.get(k), int):
                            st.usage[k] += usage[k]
                    if st.final_sent and st.audio.covered() and not st.audio.unsent:
                        return "flushed"
                    return "continue"
                elif kind == "error":
                    err = str(msg.get("error") or "no details")[:300]
                    code = str(msg.get("code") or "")[:60]
                    if code == "model_not_found":
                        raise _Fatal(f"The server at {self._url} no longer serves the model "
                                     f"{s.model!r}.", "check the server's /v1/models")
                    raise _Fatal(f"The vLLM server reported an error: {err}"
                                 + (f" ({code})" if code else ""),
                                 "see the server's log; restart the stream, or the server if "
                                 "it persists")
        except ConnectionClosed as exc:
            raise _Retry("disconnected", f"Lost the connection to the server at {self._url}.") \
                from exc
        except OSError as exc:
            raise explain_connect_error(exc, self._url, s.connect_timeout_s) from None
        finally:
            sender.cancel()
            try:
                await sender
            except BaseException:  # noqa: BLE001 - its error, if any, was raised above
                log.debug("the sender ended", exc_info=True)

    async def _sender(self, st: _Stream, ws) -> None:
        """Audio to the server as it arrives, at most ``max_inflight_s`` ahead of the text."""
        s = self.settings
        a = st.audio
        block = max(1, int(s.append_ms * SAMPLE_RATE / 1000))
        catch_up = max(block, int(s.max_append_s * SAMPLE_RATE))
        max_inflight = int(s.max_inflight_s * SAMPLE_RATE)
        while True:
            room = max_inflight - a.inflight
            if a.unsent and room > 0:
                want = catch_up if a.unsent_samples > block else block
                pcm = a.take(min(want, room))
                message = json.dumps({"type": "input_audio_buffer.append",
                                      "audio": base64.b64encode(pcm.tobytes()).decode()})
                self._mark_steps(st)  # before the send: its delta cannot come back first
                await ws.send(message)
                continue
            if st.close_requested and not a.unsent and not st.final_sent:
                st.final_sent = True
                await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
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


def _backoff(attempt: int) -> float:
    base = _BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)]
    return base * random.uniform(0.8, 1.2)
