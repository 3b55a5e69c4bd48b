"""The messages of vLLM's realtime transcription websocket (``/v1/realtime``), typed once.

As vLLM 0.32 defines them (vllm/entrypoints/speech_to_text/realtime/protocol.py), one JSON
object a websocket text frame, told apart by ``type``:

    client -> server                              server -> client
    session.update {model}                        session.created {id}: the first frame
    input_audio_buffer.append {audio}             transcription.delta {delta}: one a step
    input_audio_buffer.commit {final}             transcription.done {text, usage}: at the end
                                                  error {error, code}

A session: ``session.created`` <-, ``session.update``, ``commit`` (starts generation), PCM16
``append`` blocks as audio arrives, ``commit {final: true}``; one ``transcription.delta`` per
decoding step (the flush steps after the final commit included), then ``transcription.done``.
A good ``session.update`` is acknowledged with silence; a wrong model gets
``error {code: "model_not_found"}``.

Only the messages: the connection (websocket, errors, probes) is ``connection.py``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

MODEL_NOT_FOUND = "model_not_found"  # error code of a session.update naming a model not served


# ------------------------------------------------------------------ client ----
@dataclass(frozen=True)
class SessionUpdate:
    """The model this session asks for (a good one is acknowledged with silence)."""

    TYPE: ClassVar[str] = "session.update"
    model: str


@dataclass(frozen=True)
class AudioAppend:
    """Audio for the session, base64 PCM16 on the wire."""

    TYPE: ClassVar[str] = "input_audio_buffer.append"
    pcm16: np.ndarray  # little-endian int16 at 16 kHz


@dataclass(frozen=True)
class AudioCommit:
    """The first starts generation; the final one says no more audio comes."""

    TYPE: ClassVar[str] = "input_audio_buffer.commit"
    final: bool = False  # the server then flushes and ends the session


@dataclass(frozen=True)
class UnknownEvent:
    """An event type the server does not know: it answers with an error, after everything
    sent before it was handled (events are handled in order)."""

    type: str = "voxcap.probe"


ClientMessage = SessionUpdate | AudioAppend | AudioCommit | UnknownEvent


def encode(message: ClientMessage) -> str:
    """The text frame for ``message``."""
    if isinstance(message, AudioAppend):
        audio = base64.b64encode(np.ascontiguousarray(message.pcm16, "<i2").tobytes()).decode()
        return json.dumps({"type": message.TYPE, "audio": audio})
    if isinstance(message, AudioCommit):
        return json.dumps({"type": message.TYPE, "final": True} if message.final
                          else {"type": message.TYPE})
    if isinstance(message, SessionUpdate):
        return json.dumps({"type": message.TYPE, "model": message.model})
    if isinstance(message, UnknownEvent):
        return json.dumps({"type": message.type})
    raise TypeError(f"not a realtime client message: {message!r}")


# ------------------------------------------------------------------ server ----
@dataclass(frozen=True)
class SessionCreated:
    """The server's first frame: the session is open."""

    TYPE: ClassVar[str] = "session.created"
    id: str


@dataclass(frozen=True)
class TranscriptionDelta:
    """The text of one decoding step (often empty)."""

    TYPE: ClassVar[str] = "transcription.delta"
    delta: str


@dataclass(frozen=True)
class TranscriptionDone:
    """The session ended: its whole text and the tokens it used (None where not reported)."""

    TYPE: ClassVar[str] = "transcription.done"
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class ErrorEvent:
    """A refused event or a failure; ``code`` says which (e.g. ``model_not_found``)."""

    TYPE: ClassVar[str] = "error"
    error: str
    code: str = ""


@dataclass(frozen=True)
class Unreadable:
    """A frame that is no JSON object, or of a type this client does not know."""

    type: str  # its type, cut short ("" where it has none)


ServerMessage = SessionCreated | TranscriptionDelta | TranscriptionDone | ErrorEvent | Unreadable


def decode(frame: str | bytes) -> ServerMessage:
    """The message in a frame from the server; never raises (a bad frame is ``Unreadable``)."""
    try:
        msg = json.loads(frame)
    except (ValueError, TypeError):
        return Unreadable("")
    if not isinstance(msg, dict):
        return Unreadable("")
    kind = msg.get("type")
    if kind == TranscriptionDelta.TYPE:
        return TranscriptionDelta(str(msg.get("delta") or ""))
    if kind == TranscriptionDone.TYPE:
        usage = msg.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return TranscriptionDone(str(msg.get("text") or ""), _count(usage, "prompt_tokens"),
                                 _count(usage, "completion_tokens"))
    if kind == ErrorEvent.TYPE:
        return ErrorEvent(str(msg.get("error") or "no details"), str(msg.get("code") or ""))
    if kind == SessionCreated.TYPE:
        return SessionCreated(str(msg.get("id") or ""))
    return Unreadable(str(kind or "")[:40])


def _count(usage: dict, key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
