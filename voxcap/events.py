"""Plain event types: the only interface between engine, capture, captions, storage and UI.

Every event is an immutable dataclass with primitive fields, so it can cross threads, be
logged, or be turned into a Qt signal argument without any of these layers importing the
others.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineProgress:
    """A start-up stage: importing, loading weights, compiling, capturing graphs, ready."""

    stage: str
    detail: str = ""
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class EngineReady:
    """The engine accepts streams. Modes are what vLLM resolved, not what was asked."""

    requested_graph_mode: str
    resolved_graph_mode: str
    capture_sizes: tuple[int, ...]
    start_seconds: float
    device: str
    transcription_delay_ms: int
    max_model_len: int
    max_streams: int
    kv_cache_tokens: int | None = None  # as vLLM reports it after allocating
    kv_cache_sessions: float | None = None  # full-length sessions the KV cache fits
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineFailed:
    """The engine cannot go on (start failure, child process death, OOM...)."""

    message: str
    fix: str = ""


@dataclass(frozen=True)
class EngineStopped:
    """The engine was shut down on request."""


@dataclass(frozen=True)
class TextDelta:
    """New text from one stream: one decoding step (80 ms of audio).

    ``audio_start_s``/``audio_end_s`` is the span of the stream's audio (seconds from the
    stream's first sample) that the text describes. ``produced_at`` is ``time.time()`` when
    the token came back from vLLM.
    """

    stream_id: str
    text: str
    token_ids: tuple[int, ...]
    index: int  # 0-based step number within the stream
    audio_start_s: float
    audio_end_s: float
    produced_at: float


@dataclass(frozen=True)
class StreamFinished:
    """A stream ended. ``reason``: flushed, aborted, max_length or error."""

    stream_id: str
    reason: str
    tokens: int
    audio_seconds: float
    message: str = ""


@dataclass(frozen=True)
class AudioBlock:
    """Captured audio: 16 kHz mono float32 samples and the capture time of the first one."""

    source: str
    samples: object = field(repr=False)  # numpy.ndarray, float32, 1-D
    captured_at: float = 0.0


Event = EngineProgress | EngineReady | EngineFailed | EngineStopped | TextDelta | StreamFinished
