"""The caption watchdog: speech going into a stream with no caption text coming out is said,
then a fresh engine session is tried for it (vLLM #47614: a realtime session emitting only
padding over real speech for minutes).

Each stream's audio, as routed to the engine, is judged by a voice-activity detector
(``speech_detector``) on this room's own thread, never on a capture's. The engine's deltas
say how far it has read the stream (``audio_end_s``, empty text included) and where text last
came; speech in between, less the model's delay, is unanswered. Time is the stream's audio
time, so an engine running late (the "Catching up" band) or a file read faster than real
time raises nothing by itself.

The last ``no_captions_after_s`` s of the stream mostly speech (``SPEECH_SHARE``) and without
text -> ``CaptionWatch("missing")``; the last ``fresh_session_after_s`` s so -> a fresh engine
session for the stream (``fresh_session(stream id)``: a rollover on demand, the transcript and
the journal go on) and ``"fresh_session"``; then ``"back"`` at the first text, or
``"still_missing"`` once as long again has passed so.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...events import CaptionWatch, TextDelta
from ..lag import SAMPLE_RATE
from .speech_detector import SpeechDetector

log = logging.getLogger(__name__)
NO_CAPTIONS_AFTER_S = 8.0
FRESH_SESSION_AFTER_S = 15.0
SPEECH_SHARE = 0.5  # a stretch is "speech" when at least half its 32 ms frames are (talk has pauses)


@dataclass
class _Watched:
    label: str
    detector: SpeechDetector
    speech: deque = field(default_factory=deque)  # stream seconds where a speech frame starts
    answered_s: float = 0.0  # speech before this got text
    read_s: float = 0.0  # how far the engine has read the stream
    state: str = "ok"  # ok, missing, fresh_session, still_missing
    restart_at: float = 0.0  # stream seconds judged when the fresh session was asked for


class CaptionWatchdog:
    def __init__(self, emit: Callable[[object], None], fresh_session: Callable[[str], bool],
                 delay_s: Callable[[], float], detector: Callable[[], SpeechDetector] = SpeechDetector,
                 no_captions_after_s: float = NO_CAPTIONS_AFTER_S,
                 fresh_session_after_s: float = FRESH_SESSION_AFTER_S) -> None:
        self._emit = emit
        self._fresh_session = fresh_session  # asks the engine for one; False if it cannot
        self._delay_s = delay_s  # the model's delay: text comes this much after its speech
        self._detector = detector
        self.no_captions_after_s = no_captions_after_s
        self.fresh_session_after_s = fresh_session_after_s
        self._streams: dict[str, _Watched] = {}
        self._work: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------- any thread, quick ----
    def watch(self, stream_id: str, label: str) -> None:
        self._put(("open", stream_id, label))

    def audio(self, stream_id: str, samples: np.ndarray) -> None:
        """Audio just pushed to ``stream_id`` (its next samples, in order)."""
        self._put(("audio", stream_id, samples))

    def delta(self, event: TextDelta) -> None:
        self._put(("delta", event.stream_id, event))

    def unwatch(self, stream_id: str) -> None:
        self._put(("close", stream_id, None))

    def idle(self, timeout: float = 10.0) -> bool:
        """Wait until everything handed over so far is judged (tests, benchmarks)."""
        done = threading.Event()
        self._put(("mark", "", done))
        return done.wait(timeout)

    def stop(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._work.put(None)
                self._thread = None

    def _put(self, item: tuple) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="voxcap-caption-watchdog",
                                                daemon=True)
                self._thread.start()
            self._work.put(item)

    # ------------------------------------------------------------ the watchdog's thread ----
    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            kind, sid, payload = item
            try:
                self._take(kind, sid, payload)
            except Exception:
                log.exception("the caption watchdog failed on %s of %s", kind, sid)

    def _take(self, kind: str, sid: str, payload) -> None:
        if kind == "mark":
            payload.set()
        elif kind == "open":
            self._streams[sid] = _Watched(payload, self._detector())
        elif kind == "close":
            self._streams.pop(sid, None)
        elif (st := self._streams.get(sid)) is not None:
            if kind == "audio":
                st.speech.extend(at / SAMPLE_RATE for at in st.detector.speech_at(payload))
            else:
                self._on_delta(sid, st, payload)

    def _on_delta(self, sid: str, st: _Watched, ev: TextDelta) -> None:
        st.read_s = max(st.read_s, ev.audio_end_s)
        if ev.text.strip():
            st.answered_s = max(st.answered_s, ev.audio_end_s)
            if st.state != "ok":
                self._say(sid, st, "back", 0.0, f"{st.label}: captions are back")
                st.state = "ok"
        else:
            self._judge(sid, st, st.read_s - self._delay_s())
        longest = max(self.no_captions_after_s, self.fresh_session_after_s)
        while st.speech and st.speech[0] < min(st.answered_s, st.read_s - longest - 1.0):
            st.speech.popleft()  # older than any window

    def _speech_without_text(self, st: _Watched, until: float, window: float) -> float | None:
        """The speech in the stream's last ``window`` s that the engine has read (``until``: as
        far as its text can be due) if that stretch got no text and is mostly speech; else None."""
        start = until - window
        if start < 0 or st.answered_s > start:
            return None
        frames = sum(1 for at in st.speech if start <= at < until)
        speech_s = frames * st.detector.frame / SAMPLE_RATE
        return speech_s if speech_s >= SPEECH_SHARE * window else None

    def _judge(self, sid: str, st: _Watched, until: float) -> None:
        n, m = self.no_captions_after_s, self.fresh_session_after_s
        if st.state == "ok" and (speech_s := self._speech_without_text(st, until, n)) is not None:
            st.state = "missing"
            self._say(sid, st, "missing", speech_s, f"{st.label}: speech, but no captions for {n:.0f} s")
        elif st.state == "missing" and (speech_s := self._speech_without_text(st, until, m)) is not None:
            st.state, st.restart_at = "fresh_session", until
            if self._fresh_session(sid):
                self._say(sid, st, "fresh_session", speech_s, f"{st.label}: speech, but no captions "
                          f"for {m:.0f} s — starting a fresh caption session")
            else:  # the engine cannot (the stream's audio is all sent): said, nothing more tried
                st.state = "still_missing"
                self._say(sid, st, "still_missing", speech_s, f"{st.label}: speech, but no captions "
                          f"for {m:.0f} s (a fresh caption session cannot be started for it)")
        elif (st.state == "fresh_session" and until - st.restart_at >= m
              and (speech_s := self._speech_without_text(st, until, m)) is not None):
            st.state = "still_missing"
            self._say(sid, st, "still_missing", speech_s, f"{st.label}: still no captions after a "
                      f"fresh session ({until - st.answered_s:.0f} s of speech without captions)")

    def _say(self, sid: str, st: _Watched, state: str, speech_s: float, message: str) -> None:
        log.warning("caption watchdog: %s", message)
        self._emit(CaptionWatch(sid, st.label, state, round(speech_s, 1), message))
