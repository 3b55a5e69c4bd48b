"""Plain event types: the only interface between engine, capture, captions, storage and UI.

Every event is an immutable dataclass with primitive fields, so it can cross threads, be
logged, or be turned into a Qt signal argument without any of these layers importing the
others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


@dataclass(frozen=True)
class EngineProgress:
    """A start-up stage: importing, loading weights, compiling, capturing graphs, ready."""

    stage: str
    detail: str = ""
    elapsed_s: float = 0.0
    note: str = ""  # for the person waiting, in plain words (e.g. why this stage takes minutes)


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
    precision: str = ""  # what the weights and KV cache run in ("FP8 weights"), as said to people
    precision_line: str = ""  # why: "FP8 weights: fits this 12 GB card (≈9.2 GiB of 11.5 GiB free)"
    server: str = ""  # the vLLM server the captions come from ("MODEL at ws://HOST:PORT"); "": here


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
    the token came back from vLLM. ``said``: the model's own text where the word list
    (``captions.glossary``) changed ``text``, else None.
    """

    stream_id: str
    text: str
    token_ids: tuple[int, ...]
    index: int  # 0-based step number within the stream
    audio_start_s: float
    audio_end_s: float
    produced_at: float
    said: str | None = None


@dataclass(frozen=True)
class LineTranslated:
    """A finished caption line's language and, when asked for, its translation (``voxcap.
    translate``: worked out off the caption path, a moment after the line ended).

    ``line_id`` numbers the line in its session; ``start_s``/``end_s`` is its audio span, as in
    ``TextDelta``. ``language``: an ISO 639-1 code of the speech model's 13 languages, "other",
    or "" (too short to tell); ``target``/``translation`` are "" when the line was not translated.
    Each line comes twice when it is part of a sentence over several lines: first translated
    alone at once (``refined`` False: what the live displays show and a screen reader hears),
    then, when the sentence has ended, with its share of the sentence's translation
    (``app.line_sentences``; ``refined`` True: what the journal, history and exports keep in
    place of the first). A line that is a sentence by itself comes once, not refined.
    """

    stream_id: str
    line_id: int
    text: str
    start_s: float
    end_s: float
    language: str
    target: str = ""
    translation: str = ""
    refined: bool = False


@dataclass(frozen=True)
class StreamFinished:
    """A stream ended. ``reason``: flushed, aborted, max_length or error."""

    stream_id: str
    reason: str
    tokens: int
    audio_seconds: float
    message: str = ""


@dataclass(frozen=True)
class StreamGap:
    """Audio of a stream that will never be transcribed (reported, never silent). The remote
    engine holds a bounded amount of audio the server has not turned into text yet; beyond
    it (server unreachable, or too slow) the oldest is dropped. ``reason``: "disconnected" or
    "server behind". ``at_s`` is where the gap starts in stream time (seconds from the
    stream's first sample); ``total_lost_s`` all loss of that stream so far."""

    stream_id: str
    lost_seconds: float
    reason: str
    at_s: float = 0.0
    total_lost_s: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class StreamInterrupted:
    """The remote engine lost the server for this stream; it reconnects with backoff and keeps
    (a bounded amount of) the audio meanwhile. StreamResumed follows, or StreamFinished('error')
    once it gives up."""

    stream_id: str
    reason: str
    message: str = ""


@dataclass(frozen=True)
class StreamResumed:
    """Text flows again after a StreamInterrupted: a new server session took over the stream;
    ``replayed_s`` of held audio is being transcribed late."""

    stream_id: str
    outage_s: float
    replayed_s: float
    message: str = ""


@dataclass(frozen=True)
class SessionRolled:
    """A stream continued in a fresh engine session at ``at_audio_s`` (seconds of the stream).

    ``reason``: pause (switched at a pause after the soft limit), latency (steps got slow),
    limit (hard limit reached with no pause), max_length (vLLM stopped the session early;
    ``lost_s`` of audio it had not consumed could not be recovered), no captions (the caption
    watchdog asked for it: speech got no text).
    """

    stream_id: str
    session: int  # number of the new session, 1 for the first rollover
    at_audio_s: float
    reason: str
    wall: float
    lost_s: float = 0.0


@dataclass(frozen=True)
class AudioBlock:
    """Captured audio: 16 kHz mono float32 samples and the capture time of the first one."""

    source: str
    samples: object = field(repr=False)  # numpy.ndarray, float32, 1-D
    captured_at: float = 0.0


# ---------------------------------------------------------------------------- capture ----
# Every capture event names its ``source`` (the capture's label, e.g. "Them", "You") and carries
# ``message``: one line a person can read, printed as is by the CLI and shown by the GUI.


@dataclass(frozen=True)
class CaptureStarted:
    """A capture stream is open (first time, or again after an interruption)."""

    source: str
    device: str  # the sound server's name for the device, e.g. "vspeaker.monitor"
    description: str  # what a person recognises, e.g. "Monitor of Built-in Audio Analog Stereo"
    rate: int  # native rate the device is read at (resampled to 16 kHz after)
    channels: int  # native channels (averaged to mono after)
    message: str = ""


@dataclass(frozen=True)
class CaptureInterrupted:
    """Audio stopped arriving: ``reason`` is one of "stream finished", "stalled", "server gone",
    "open failed". The watchdog keeps reopening with backoff; CaptureRecovered follows."""

    source: str
    reason: str
    message: str = ""


@dataclass(frozen=True)
class CaptureRecovered:
    """Audio flows again after a CaptureInterrupted; ``outage_s`` is how long none arrived."""

    source: str
    device: str
    description: str
    outage_s: float
    message: str = ""


@dataclass(frozen=True)
class CaptureDeviceChanged:
    """The stream now reads another device. ``reason``: "lost" (the chosen device vanished and
    the capture fell back), "returned" (the chosen device is back and the capture followed it),
    "default changed" (system/mic follow the server's default), "moved" (something else, e.g.
    the user or the server, moved the stream; voxcap moved it back)."""

    source: str
    from_device: str  # descriptions
    to_device: str
    reason: str
    message: str = ""


@dataclass(frozen=True)
class CaptureLoss:
    """Audio was lost (reported, never silent). ``kind``: "queue full" (the consumer was too
    slow and the bounded queue dropped blocks), "overflow" (the sound server/PortAudio reported
    an input overflow) or "gap" (fewer frames arrived than the wall clock says should have).
    ``blocks``/``seconds`` are this report's loss; ``total_seconds`` all loss of that kind so far."""

    source: str
    kind: str
    blocks: int
    seconds: float
    total_seconds: float
    message: str = ""


@dataclass(frozen=True)
class CaptureStopped:
    """A capture was stopped on request; totals for the whole capture."""

    source: str
    seconds_delivered: float
    dropped_blocks: int
    overflows: int
    gap_seconds: float
    interruptions: int
    message: str = ""


@dataclass(frozen=True)
class SourceEnded:
    """A source that has an end (an audio file) delivered its last block; ``error``: why it
    ended early (unreadable audio), "" at its real end."""

    source: str
    seconds: float
    error: str = ""
    message: str = ""


@dataclass(frozen=True)
class DevicesChanged:
    """The sound server's devices or defaults changed; ``devices`` is the new list
    (``voxcap.capture.devices.DeviceInfo`` items)."""

    devices: tuple = ()
    server_up: bool = True


@dataclass(frozen=True)
class AppsChanged:
    """The applications playing sound changed; ``apps`` is the new list
    (``voxcap.capture.apps.AppInfo`` items)."""

    apps: tuple = ()


CaptureEvent = (CaptureStarted | CaptureInterrupted | CaptureRecovered | CaptureDeviceChanged
                | CaptureLoss | CaptureStopped | SourceEnded | DevicesChanged)

# what an engine publishes; SessionRolled only from the rolling engine (engine/rollover.py)
Event = (EngineProgress | EngineReady | EngineFailed | EngineStopped | TextDelta | StreamFinished
         | StreamGap | StreamInterrupted | StreamResumed | SessionRolled)


# ------------------------------------------------------------------------ app session ----
# Published by the session controller (``voxcap.app.controller``) that the GUI drives.


class Captioning(StrEnum):
    """Where captioning as a whole stands (``CaptioningState.state``). Its values are what the
    caption page's feed sends, so they compare equal to those strings."""

    OFF = "off"
    STARTING = "starting"
    WAITING = "waiting"  # for the engine; the audio meanwhile is held
    ON = "on"
    RESTARTING = "restarting"  # engine restart: audio is held, streams reopen after
    PAUSED = "paused"  # nothing captured; the session, its journal and captions kept to resume
    STOPPING = "stopping"  # flushing the last words
    CLOSED = "closed"  # the controller shut down: the app leaves

    @property
    def active(self) -> bool:
        """A session is open and not yet stopping (paused too): Stop, or a switch of source,
        acts on it."""
        return self.capturing or self is Captioning.PAUSED

    @property
    def capturing(self) -> bool:
        """Audio is being captured for the session (not paused): Pause acts on it."""
        return self in (Captioning.STARTING, Captioning.WAITING, Captioning.ON,
                        Captioning.RESTARTING)


@dataclass(frozen=True)
class CaptioningState:
    """Captioning as a whole changed state; ``sources``: the stream labels."""

    state: Captioning
    session_id: str = ""
    sources: tuple[str, ...] = ()
    message: str = ""

    def __post_init__(self) -> None:  # a plain string is taken, and a misspelt one refused here
        object.__setattr__(self, "state", Captioning(self.state))


@dataclass(frozen=True)
class CaptioningAsked:
    """The person asked to pause or resume (F6): ``what`` "pausing" or "resuming", said at once
    (a pause waits for the last words' flush, seconds on a real model) until the next
    ``CaptioningState``, or an ``AppProblem`` that refuses it."""

    what: str


@dataclass(frozen=True)
class StreamOpened:
    """A caption stream opened for a source (again after an engine restart: new id, same label)."""

    stream_id: str
    label: str
    source: str  # the device's description


@dataclass(frozen=True)
class CaptionWatch:
    """The caption watchdog's news of one stream (``app.session.caption_watchdog``): speech with
    no caption text (``state`` "missing"), a fresh engine session started for it
    ("fresh_session"), captions back ("back"), or still none after the fresh session
    ("still_missing"). ``message`` says it in words; ``speech_s``: unanswered speech so far."""

    stream_id: str
    label: str
    state: str
    speech_s: float
    message: str

    @property
    def missing(self) -> bool:
        return self.state != "back"


@dataclass(frozen=True)
class SourceSilence:
    """A live source with no sound (below -60 dBFS) for ``silent_s`` ("silent": a muted
    microphone, sound played on another output), or sound from it again ("back"); the rule is
    ``app.session.input_levels``'. ``message`` and ``fix`` say it in words; ``hint``: what to
    check in a few words, for the overlay's one-line band ("microphone muted?")."""

    source: str
    state: str
    silent_s: float
    message: str
    fix: str = ""
    hint: str = ""

    @property
    def silent(self) -> bool:
        return self.state == "silent"


@dataclass(frozen=True)
class EngineRestarting:
    """The engine is being replaced (new settings, e.g. the graph mode); stages follow."""

    reason: str
    message: str = ""


@dataclass(frozen=True)
class AppProblem:
    """Something the user should know and can act on (a source that cannot be opened, held
    audio dropped...). ``where``: "capture", "engine", "journal", "settings"."""

    message: str
    fix: str = ""
    where: str = ""
