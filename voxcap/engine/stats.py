"""Measured engine statistics: per stream and overall, safe to read from any thread.

Everything here is measured at the engine boundary: the time a prompt (one audio chunk) is
handed to vLLM and the time its token comes back, the tokens actually emitted, and the graph
mode vLLM reports for each step it ran. Nothing is derived from what the settings asked for.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..framing import SAMPLE_RATE, STEP_MS, STEP_SAMPLES

STEP_BUDGET_MS = float(STEP_MS)  # one token per step of audio: live captioning needs steps faster
_WINDOW_S = 10.0  # tokens/s over the last 10 s
_LATENCY_WINDOW = 1000  # steps kept for percentiles


def _percentile(values, q: float) -> float | None:
    return float(np.percentile(np.fromiter(values, float), q)) if values else None


@dataclass(frozen=True)
class StreamStatsSnapshot:
    stream_id: str
    tokens: int
    audio_in_s: float  # audio received from the app
    audio_done_s: float  # audio whose token came back
    backlog_ms: float  # received but not yet turned into a token
    tokens_per_s: float  # over the last 10 s
    step_p50_ms: float | None
    step_p95_ms: float | None
    headroom: float | None  # 80 ms / p50 step latency; < 1 means falling behind
    tokens_per_audio_s: float | None
    finished: bool


@dataclass(frozen=True)
class StatsSnapshot:
    at: float
    streams: tuple[StreamStatsSnapshot, ...]
    tokens: int
    tokens_per_s: float
    step_p50_ms: float | None
    step_p95_ms: float | None
    headroom: float | None
    backlog_ms: float  # largest backlog among open streams
    steps_by_graph_mode: dict[str, int] = field(default_factory=dict)
    engine_steps: int = 0

    def graph_share(self, mode: str) -> float | None:
        total = sum(self.steps_by_graph_mode.values())
        return self.steps_by_graph_mode.get(mode, 0) / total if total else None


class _StreamStats:
    def __init__(self, stream_id: str) -> None:
        self.stream_id = stream_id
        self.samples_in = 0
        self.tokens = 0
        self.first_step_samples: int | None = None  # real samples the first step consumes
        self.step_samples = STEP_SAMPLES
        self.sent: deque[float] = deque()  # perf_counter of prompts handed to vLLM, FIFO
        self.latencies: deque[float] = deque(maxlen=_LATENCY_WINDOW)
        self.token_times: deque[float] = deque()
        self.last_token_at: float | None = None
        self.finished = False

    def samples_done(self) -> int:
        if self.tokens == 0 or self.first_step_samples is None:
            return 0
        done = self.first_step_samples + (self.tokens - 1) * self.step_samples
        return min(done, self.samples_in)


class EngineStats:
    """Collects measurements from the engine thread; ``snapshot()`` from anywhere."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[str, _StreamStats] = {}
        self._graph_modes: Counter[str] = Counter()
        self._engine_steps = 0
        self._alias: dict[str, str] = {}  # engine session id -> the stream it serves
        # optional (stream_id, latency_ms) callback per step, for benchmarks that need every step
        self.latency_observer: Callable[[str, float], None] | None = None

    # -- called by the engine ---------------------------------------------------------
    def open(self, stream_id: str, first_step_samples: int, step_samples: int) -> None:
        with self._lock:
            s = self._streams[stream_id] = _StreamStats(stream_id)
            s.first_step_samples, s.step_samples = first_step_samples, step_samples

    def audio_in(self, stream_id: str, n: int) -> None:
        with self._lock:
            if s := self._streams.get(stream_id):
                s.samples_in += n

    def prompt_sent(self, stream_id: str) -> None:
        with self._lock:
            if s := self._streams.get(stream_id):
                s.sent.append(time.perf_counter())

    def token_back(self, stream_id: str, n_tokens: int) -> float | None:
        """Record a step's output; return its latency in ms (None if unmatched)."""
        now = time.perf_counter()
        with self._lock:
            s = self._streams.get(stream_id)
            if s is None:
                return None
            s.tokens += n_tokens
            s.token_times.append(now)
            while s.token_times and now - s.token_times[0] > _WINDOW_S:
                s.token_times.popleft()
            previous, s.last_token_at = s.last_token_at, now
            if not s.sent:
                return None
            # The step's own time: from its prompt, or from the previous token when the prompt
            # was sent ahead and waited its turn (token carry). Without carry a prompt always
            # leaves after the previous token, so this is prompt -> token.
            latency = (now - max(s.sent.popleft(), previous or 0.0)) * 1000.0
            s.latencies.append(latency)
        if self.latency_observer is not None:
            self.latency_observer(stream_id, latency)
        return latency

    def discard_sent(self, stream_id: str) -> None:
        """Forget prompts whose tokens will never come back (a remote session was lost), so
        the next token is not matched with them."""
        with self._lock:
            if s := self._streams.get(stream_id):
                s.sent.clear()

    def finish(self, stream_id: str) -> None:
        with self._lock:
            if s := self._streams.get(stream_id):
                s.finished = True
                s.sent.clear()

    def forget(self, stream_id: str) -> None:
        with self._lock:
            self._streams.pop(stream_id, None)
            self._alias.pop(stream_id, None)

    def alias(self, session_id: str, stream_id: str) -> None:
        """Report engine session ``session_id`` under ``stream_id`` (after a rollover)."""
        with self._lock:
            self._alias[session_id] = stream_id

    def engine_step(self, runtime_mode: str | None) -> None:
        """One scheduler step as reported by vLLM's stat logger."""
        with self._lock:
            self._engine_steps += 1
            if runtime_mode:
                self._graph_modes[runtime_mode] += 1

    # -- readers ----------------------------------------------------------------------
    def recent_p95(self, stream_id: str, n: int = 50) -> float | None:
        """p95 step latency (ms) of a stream's last ``n`` steps, once it has that many."""
        with self._lock:
            s = self._streams.get(stream_id)
            recent = list(s.latencies)[-n:] if s is not None else []
        return _percentile(recent, 95) if len(recent) >= n else None

    def snapshot(self) -> StatsSnapshot:
        now = time.perf_counter()
        with self._lock:
            per = tuple(self._snap(s, now, self._alias.get(s.stream_id, s.stream_id))
                        for s in self._streams.values())
            all_lat = [x for s in self._streams.values() for x in s.latencies]
            modes = dict(self._graph_modes)
            steps = self._engine_steps
        p50, p95 = _percentile(all_lat, 50), _percentile(all_lat, 95)
        open_backlogs = [s.backlog_ms for s in per if not s.finished]
        return StatsSnapshot(
            at=time.time(), streams=per, tokens=sum(s.tokens for s in per),
            tokens_per_s=sum(s.tokens_per_s for s in per), step_p50_ms=p50, step_p95_ms=p95,
            headroom=(STEP_BUDGET_MS / p50) if p50 else None,
            backlog_ms=max(open_backlogs, default=0.0), steps_by_graph_mode=modes,
            engine_steps=steps,
        )

    @staticmethod
    def _snap(s: _StreamStats, now: float, name: str) -> StreamStatsSnapshot:
        times = [t for t in s.token_times if now - t <= _WINDOW_S]
        # tokens per second while generating, over the last 10 s (0 once a stream stalls)
        rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) >= 2 and times[-1] > times[0] else 0.0
        p50, p95 = _percentile(s.latencies, 50), _percentile(s.latencies, 95)
        audio_in = s.samples_in / SAMPLE_RATE
        done = s.samples_done() / SAMPLE_RATE
        return StreamStatsSnapshot(
            stream_id=name, tokens=s.tokens, audio_in_s=audio_in, audio_done_s=done,
            backlog_ms=0.0 if s.finished else max(0.0, (audio_in - done) * 1000.0),
            tokens_per_s=rate, step_p50_ms=p50, step_p95_ms=p95,
            headroom=(STEP_BUDGET_MS / p50) if p50 else None,
            tokens_per_audio_s=(s.tokens / audio_in) if audio_in > 0 else None,
            finished=s.finished,
        )
