"""Session rollover: a caption stream longer than one engine session, with nothing lost.

vLLM's per-step cost grows with the session's length (each streaming chunk re-ships the
whole session to the worker) and a session ends at max_model_len, so a
stream left running falls behind real time within minutes. ``RollingEngine`` wraps any
engine and splits each *logical* stream into consecutive engine sessions (a session here is
one stretch of a stream in vLLM, up to its max_model_len; a saved captioning session is
``captions.sessions``, the desktop session ``app.desktop_environment``):

* every sample goes to exactly one session (audio is cut at a sample boundary B: the old
  session gets audio up to B and is flushed, the new one starts at B), so no audio or text is
  lost or duplicated;
* B is chosen at a pause (a quiet 80 ms frame) once the session is past ``soft_s`` or its
  step latency passed ``latency_bound_ms``; at ``hard_s`` (or the context cap) at the latest;
* audio arriving while the old session flushes and the new one warms up is buffered here,
  not dropped; deltas keep one index sequence and audio spans keep counting from the stream's
  first sample, so captions and subtitles stay continuous;
* every switch is published as a ``SessionRolled`` event (journal, meter).

Sessions are switched one after the other (flush, then open), so a logical stream never
needs more than one engine slot and its text stays in audio order.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import EngineError
from ..events import (
    Event,
    SessionRolled,
    StreamFinished,
    StreamGap,
    StreamInterrupted,
    StreamResumed,
    TextDelta,
)
from ..framing import SAMPLE_RATE, STEP_SAMPLES
from .base import CaptionEngine

FLUSH_TOKENS_MAX = 63  # right padding at the longest delay (2400 ms): room kept below the cap


@dataclass(frozen=True)
class RolloverPolicy:
    """When to start a fresh engine session. Defaults chosen from measurements (see README)."""

    # With voxcap's session fix the H200's step grows only with attention length, ~0.23 ms per
    # 1,000 tokens (2 %); sessions of up to 4,500 tokens keep p95 within ~10 % of their first
    # minute, and each switch costs a fresh prompt. docs/gpu-results.md: "Rollover thresholds".
    soft_s: float = 240.0  # from here on, switch at the first pause
    hard_s: float = 360.0  # switch here at the latest (also capped by max_model_len)
    latency_bound_ms: float = 40.0  # step p95 above this counts as "soft limit reached"
    pause_ratio: float = 0.1  # a frame quieter than 10% of recent speech level is a pause
    silence_rms: float = 10 ** (-50 / 20)  # below -50 dBFS is quiet whatever the level
    min_pause_s: float = 0.32  # quiet this long is a pause between sentences, not words

    def capped(self, max_model_len: int, prompt_tokens: int = 63) -> RolloverPolicy:
        """Hard limit that always leaves room for the prompt and the flush below the cap."""
        cap_s = (max_model_len - prompt_tokens - FLUSH_TOKENS_MAX - 16) * STEP_SAMPLES / SAMPLE_RATE
        if cap_s <= 1.0:
            raise EngineError(f"max session length {max_model_len} tokens leaves no room for audio",
                              "raise the max session length")
        hard = min(self.hard_s, cap_s)
        return replace(self, soft_s=min(self.soft_s, hard * 0.8), hard_s=hard)


@dataclass(frozen=True)
class SessionRecord:
    """One finished engine session of a logical stream, as the engine reported it."""

    inner_id: str
    start_sample: int  # where it starts in the logical stream
    samples: int  # audio the engine received for it
    tokens: int
    reason: str


@dataclass
class CutState:
    """Where a stream stands for ``find_cut``: the session's position and the pause tracking."""

    session_start: int = 0  # stream sample where the current session starts
    samples_sent: int = 0  # stream samples handed to sessions
    soft_reached: bool = False
    rollover_reason: str = ""
    speech_level: float = 0.0
    quiet_samples: int = 0  # quiet audio just before, in samples (blocks may be any size)


def find_cut(p: RolloverPolicy, st: CutState, chunk: np.ndarray,
             latency_high: bool = False) -> int | None:
    """Offset in ``chunk`` (the next audio of the stream) where the current session should end,
    or None to go on; updates ``st`` (pause tracking, the reason). Pure: no engine needed.

    From ``soft_s`` on (or once the step latency is high) the session ends in the first pause of
    ``min_pause_s``, halfway into it; at ``hard_s`` it ends wherever the audio is.
    """
    pos = st.samples_sent - st.session_start  # session samples before this chunk
    soft, hard = int(p.soft_s * SAMPLE_RATE), int(p.hard_s * SAMPLE_RATE)
    if not st.soft_reached and latency_high:
        st.soft_reached, st.rollover_reason = True, "latency"
    for start in range(0, chunk.size, STEP_SAMPLES):
        frame = chunk[start:start + STEP_SAMPLES]
        rms = float(np.sqrt(np.mean(frame * frame)))
        quiet = rms < max(p.silence_rms, p.pause_ratio * st.speech_level)
        if quiet:
            st.quiet_samples += frame.size
        else:  # follow the speech level, over about 2 s
            st.quiet_samples = 0
            st.speech_level = rms if not st.speech_level else 0.96 * st.speech_level + 0.04 * rms
        if pos + start + frame.size > hard:
            st.rollover_reason = "limit"
            return max(0, hard - pos)
        if not st.soft_reached and pos + start >= soft:
            st.soft_reached, st.rollover_reason = True, "pause"
        if st.soft_reached and st.quiet_samples >= p.min_pause_s * SAMPLE_RATE:
            return start + frame.size // 2  # well inside the pause
    return None


@dataclass
class _Logical(CutState):
    stream_id: str = ""
    label: str = ""
    inner_id: str = ""  # the current session's stream in the inner engine
    session: int = 0  # number of the current session, 0-based
    samples_in: int = 0  # stream samples received
    token_base: int = 0  # deltas of earlier sessions
    tokens: int = 0
    pending: list = field(default_factory=list)  # audio waiting for the next session
    switching: bool = False
    close_requested: bool = False
    finished: bool = False
    cut_requested: str = ""  # a fresh session asked for (its reason), at the next audio
    lost_s: float = 0.0  # audio vLLM dropped at an unexpected context cap
    sessions: list = field(default_factory=list)  # SessionRecord of every finished session
    done: threading.Event = field(default_factory=threading.Event)


class RollingEngine(CaptionEngine):
    """A CaptionEngine whose streams outlive engine sessions (see module docstring).

    ``make_inner(sink)`` builds the underlying engine publishing to ``sink``.
    """

    def __init__(self, make_inner: Callable[[Callable[[Event], None]], CaptionEngine],
                 policy: RolloverPolicy | None = None,
                 on_event: Callable[[Event], None] | None = None) -> None:
        self.events: queue.Queue = queue.Queue()
        self._sink = on_event or self.events.put
        self._policy_request = policy or RolloverPolicy()
        self.policy = self._policy_request
        self.inner = make_inner(self._on_inner_event)
        self.stats = self.inner.stats
        self._lock = threading.RLock()
        self._streams: dict[str, _Logical] = {}
        self._by_inner: dict[str, _Logical] = {}
        self._work: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._run_worker, name="voxcap-rollover", daemon=True)
        self._worker.start()

    # -- engine interface (delegated) -----------------------------------------------------
    @property
    def settings(self):
        return self.inner.settings

    @property
    def ready_info(self):
        return self.inner.ready_info

    @property
    def failure(self):
        return self.inner.failure

    @property
    def is_ready(self) -> bool:
        return self.inner.is_ready

    @property
    def first_step_samples(self) -> int:
        return self.inner.first_step_samples

    @property
    def stops_while_starting(self) -> bool:
        return getattr(self.inner, "stops_while_starting", False)

    @property
    def on_cuda(self) -> bool:
        return getattr(self.inner, "on_cuda", True)

    def start(self) -> RollingEngine:
        self.inner.start()
        return self

    def wait_ready(self, timeout: float | None = None):
        info = self.inner.wait_ready(timeout)
        if info.max_model_len:  # a remote server may not say; it continues sessions itself
            self.policy = self._policy_request.capped(info.max_model_len)
        return info

    def shutdown(self, timeout: float = 30.0) -> None:
        self._work.put(None)
        self.inner.shutdown(timeout)

    def engine_pids(self) -> list[int]:
        return self.inner.engine_pids()

    # -- streams ----------------------------------------------------------------------------
    def open_stream(self, label: str = "") -> str:
        inner_id = self.inner.open_stream(label)
        with self._lock:
            st = _Logical(stream_id=inner_id, label=label, inner_id=inner_id)
            self._streams[inner_id] = st
            self._by_inner[inner_id] = st
        return inner_id

    def push_audio(self, stream_id: str, samples: np.ndarray) -> None:
        chunk = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None or st.finished or st.close_requested or chunk.size == 0:
                return
            st.samples_in += chunk.size
            if st.switching:
                st.pending.append(chunk.copy())
                return
            cut = self._find_cut(st, chunk)
            if cut is None:
                self._send(st, chunk)
                return
            self._send(st, chunk[:cut])
            st.pending.append(chunk[cut:].copy())
            self._begin_switch(st)

    def close_stream(self, stream_id: str) -> None:
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None or st.close_requested:
                return
            st.close_requested = True
            if not st.switching:
                self.inner.close_stream(st.inner_id)
            # else: the worker closes the next session once the pending audio is in it

    def abort_stream(self, stream_id: str) -> None:
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None or st.finished:
                return
            st.close_requested = True
            st.pending.clear()
            inner_id, switching = st.inner_id, st.switching
            if switching:  # between sessions: nothing runs, finish here
                self._finish(st, "aborted", "")
        if not switching:
            self.inner.abort_stream(inner_id)

    def wait_stream(self, stream_id: str, timeout: float | None = None) -> bool:
        st = self._streams.get(stream_id)
        return True if st is None else st.done.wait(timeout)

    def open_stream_ids(self) -> list[str]:
        return [s for s, st in list(self._streams.items()) if not st.finished]

    def fresh_session(self, stream_id: str, reason: str = "no captions") -> bool:
        """Continue ``stream_id`` in a fresh engine session from its next audio on, as a rollover
        does (nothing lost, one text sequence); False if the stream is not running or already
        switching. The caption watchdog's remedy for a session that stopped giving text."""
        with self._lock:
            st = self._streams.get(stream_id)
            if st is None or st.finished or st.close_requested or st.switching:
                return False
            st.cut_requested = reason
            return True

    def sessions(self, stream_id: str) -> list[SessionRecord]:
        """The finished engine sessions of a stream, in order."""
        st = self._streams.get(stream_id)
        return list(st.sessions) if st else []

    # -- cutting ----------------------------------------------------------------------------
    def _find_cut(self, st: _Logical, chunk: np.ndarray) -> int | None:
        if st.cut_requested:  # on demand: before this chunk
            st.rollover_reason, st.cut_requested = st.cut_requested, ""
            return 0
        return find_cut(self.policy, st, chunk, self._latency_high(st))

    def _latency_high(self, st: _Logical) -> bool:
        p95 = self.stats.recent_p95(st.inner_id)
        return p95 is not None and p95 > self.policy.latency_bound_ms

    def _send(self, st: _Logical, chunk: np.ndarray) -> None:
        if chunk.size:
            st.samples_sent += chunk.size
            self.inner.push_audio(st.inner_id, chunk)

    def _begin_switch(self, st: _Logical) -> None:
        st.switching = True
        self.inner.close_stream(st.inner_id)  # the old session flushes its delayed words

    # -- events from the inner engine (on its thread: never block here) ---------------------
    def _on_inner_event(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            with self._lock:
                st = self._by_inner.get(event.stream_id)
                if st is None:
                    return
                offset = st.session_start / SAMPLE_RATE
                st.tokens += len(event.token_ids) or 1  # a remote delta carries no ids
                mapped = TextDelta(st.stream_id, event.text, event.token_ids,
                                   st.token_base + event.index, event.audio_start_s + offset,
                                   event.audio_end_s + offset, event.produced_at)
            self._sink(mapped)
        elif isinstance(event, StreamFinished):
            self._on_session_finished(event)
        elif isinstance(event, StreamGap | StreamInterrupted | StreamResumed):
            # a session's notices (remote engine) under the logical stream's id, gap positions in
            # the logical stream's time
            with self._lock:
                st = self._by_inner.get(event.stream_id)
                if st is None:
                    return
                notice: Event = replace(event, stream_id=st.stream_id)
                if isinstance(event, StreamGap):
                    notice = replace(event, stream_id=st.stream_id,
                                     at_s=event.at_s + st.session_start / SAMPLE_RATE)
            self._sink(notice)
        else:
            self._sink(event)

    def _on_session_finished(self, event: StreamFinished) -> None:
        with self._lock:
            st = self._by_inner.pop(event.stream_id, None)
            if st is None:
                return
            st.sessions.append(SessionRecord(event.stream_id, st.session_start,
                                             round(event.audio_seconds * SAMPLE_RATE),
                                             event.tokens, event.reason))
            if event.reason in ("aborted", "error") or (not st.switching and event.reason == "flushed"):
                self._finish(st, event.reason, event.message)
                return
            if event.reason == "max_length":
                # The hard limit keeps sessions below the cap, so this means vLLM took fewer
                # tokens than planned: say how much audio it dropped instead of hiding it.
                first = self.inner.first_step_samples
                consumed = first + max(0, event.tokens - 1) * STEP_SAMPLES
                st.lost_s += max(0, st.samples_sent - st.session_start - consumed) / SAMPLE_RATE
                st.rollover_reason = "max_length"
                st.switching = True
            st.token_base += event.tokens
        self._work.put(st)

    def _finish(self, st: _Logical, reason: str, message: str) -> None:
        if st.finished:
            return
        st.finished = True
        self._sink(StreamFinished(st.stream_id, reason, st.tokens, st.samples_in / SAMPLE_RATE,
                                  message))
        st.done.set()

    # -- the worker: opens the next session once the previous one has flushed --------------
    def _run_worker(self) -> None:
        while (st := self._work.get()) is not None:
            try:
                self._next_session(st)
            except Exception as exc:  # noqa: BLE001 - the stream ends with the reason
                with self._lock:
                    self._finish(st, "error", f"could not start the next session: {exc}")

    def _next_session(self, st: _Logical) -> None:
        inner_id = self.inner.open_stream(st.label)
        with self._lock:
            if st.finished:
                self.inner.abort_stream(inner_id)
                return
            at = st.samples_sent
            reason = st.rollover_reason or "limit"
            st.session += 1
            st.session_start = at
            previous, st.inner_id = st.inner_id, inner_id
            self.stats.forget(previous)  # stats stay bounded over hours of rollovers
            self.stats.alias(inner_id, st.stream_id)
            st.soft_reached = False
            st.quiet_samples = 0
            st.rollover_reason = ""
            self._by_inner[inner_id] = st
            self._sink(SessionRolled(st.stream_id, st.session, at / SAMPLE_RATE, reason,
                                     time.time(), st.lost_s))
            st.lost_s = 0.0
            pending, st.pending = st.pending, []
            st.switching = False
            for chunk in pending:  # pending audio may itself need a cut (very long switch)
                if st.switching:
                    st.pending.append(chunk)
                    continue
                cut = self._find_cut(st, chunk)
                if cut is None:
                    self._send(st, chunk)
                else:
                    self._send(st, chunk[:cut])
                    st.pending.append(chunk[cut:].copy())
                    self._begin_switch(st)
            if st.close_requested and not st.switching:
                self.inner.close_stream(inner_id)
