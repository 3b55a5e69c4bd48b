"""One remote stream's audio between capture and the server's text (pure; no I/O).

The remote engine may lose a server session at any time (dropped connection, the server's
max session length), so it keeps every sample the server has not yet turned into text and
replays it into the next session. This module is that bookkeeping:

* stream time: samples since the stream's first one (``total_in`` so far);
* session time: samples sent into the current server session; ``segments`` maps session
  positions to stream positions (a new segment starts wherever audio was dropped);
* token k of a session covers session frame k, ``[k*step, (k+1)*step)`` samples (the model's
  delay is built into when the token arrives), exactly as the in-process engine maps it;
* held audio (sent but not covered, or not sent yet) is bounded by ``max_samples``: beyond it
  the oldest is dropped. Unsent audio dropped is lost at once; sent audio dropped is "at risk":
  lost only if its session ends before the text for it arrives.

Lost audio is kept as exact stream intervals in ``pending_gaps`` (for the engine to report as
StreamGap events) and counted in ``lost_total``; it is never silent. When unsent audio must be
dropped, it is dropped down to ``hysteresis`` below the bound: a few whole gaps rather than
audio full of 80 ms holes, which no one could read captions of.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass

import numpy as np

from ...framing import SAMPLE_RATE, STEP_SAMPLES

_BLOCK_MAX = SAMPLE_RATE  # samples: one second


@dataclass
class _Block:
    start: int  # stream position of the first sample
    pcm: np.ndarray  # int16
    session_pos: int = -1  # session position once sent

    @property
    def n(self) -> int:
        return int(self.pcm.size)

    def cut_front(self, k: int) -> None:
        self.pcm = self.pcm[k:]
        self.start += k
        if self.session_pos >= 0:
            self.session_pos += k


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """float32 [-1, 1] -> little-endian int16 (clipped, rounded)."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    x = np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
    return np.rint(x * 32767.0).astype("<i2")


class StreamAudio:
    def __init__(self, step_samples: int = STEP_SAMPLES, max_samples: int | None = None,
                 hysteresis: int | None = None) -> None:
        self.step = step_samples
        self.max_samples = max_samples
        if hysteresis is None:  # a quarter of the bound, at most 2 s
            hysteresis = 0 if max_samples is None else min(max_samples // 4, 2 * SAMPLE_RATE)
        self.hysteresis = hysteresis
        self.total_in = 0
        self.unsent: deque[_Block] = deque()
        self.sent: deque[_Block] = deque()
        self.held = 0
        self.session_sent = 0
        self.session_tokens = 0
        self._seg_pos: list[int] = []  # session positions where segments start
        self._seg_start: list[int] = []  # their stream positions
        self.risk_end = 0  # session position up to which in-flight audio was dropped
        self.pending_gaps: list[list[int]] = []  # [stream start, samples] not yet reported
        self.lost_total = 0

    # ------------------------------------------------------------------ input ----
    def push(self, pcm: np.ndarray) -> None:
        # blocks of at most 1 s, each its own copy: dropping one frees its memory
        for i in range(0, int(pcm.size), _BLOCK_MAX):
            part = np.array(pcm[i:i + _BLOCK_MAX], dtype="<i2")
            self.unsent.append(_Block(self.total_in, part))
            self.total_in += int(part.size)
            self.held += int(part.size)
        self._enforce_bound()

    def _enforce_bound(self) -> None:
        if self.max_samples is None or self.held <= self.max_samples:
            return
        while self.held > self.max_samples and self.sent:
            # in flight: only at risk (the server may still transcribe it)
            b = self.sent[0]
            k = min(self.held - self.max_samples, b.n)
            self.risk_end = max(self.risk_end, b.session_pos + k)
            if k == b.n:
                self.sent.popleft()
            else:
                b.cut_front(k)
            self.held -= k
        if self.held > self.max_samples:  # lost now: one whole gap, down to the hysteresis
            target = self.max_samples - self.hysteresis
            while self.held > target and self.unsent:
                b = self.unsent[0]
                k = min(self.held - target, b.n)
                self._lose(b.start, k)
                if k == b.n:
                    self.unsent.popleft()
                else:
                    b.cut_front(k)
                self.held -= k

    def _lose(self, at: int, n: int) -> None:
        if n <= 0:
            return
        gaps = self.pending_gaps
        if gaps and gaps[-1][0] + gaps[-1][1] == at:
            gaps[-1][1] += n
        else:
            gaps.append([at, n])
        self.lost_total += n

    @property
    def pending_lost(self) -> int:
        return sum(n for _, n in self.pending_gaps)

    def take_lost(self) -> list[tuple[int, int]]:
        """The lost intervals (stream start, samples) since the last call, in stream order."""
        out: list[tuple[int, int]] = []
        for a, n in sorted((a, n) for a, n in self.pending_gaps):
            if out and out[-1][0] + out[-1][1] == a:  # adjacent: one gap
                out[-1] = (out[-1][0], out[-1][1] + n)
            else:
                out.append((a, n))
        self.pending_gaps = []
        return out

    # ------------------------------------------------------------------ sending ----
    @property
    def unsent_samples(self) -> int:
        return sum(b.n for b in self.unsent)

    @property
    def inflight(self) -> int:
        """Session samples sent but not yet covered by a token."""
        return max(0, self.session_sent - self.session_tokens * self.step)

    def take(self, max_n: int) -> np.ndarray | None:
        """Up to ``max_n`` unsent samples (contiguous in stream time), now counted as sent."""
        if not self.unsent or max_n <= 0:
            return None
        parts: list[np.ndarray] = []
        got = 0
        expect = self.unsent[0].start
        while self.unsent and got < max_n and self.unsent[0].start == expect:
            b = self.unsent[0]
            if b.n > max_n - got:  # split: the rest stays first in line
                k = max_n - got
                head = _Block(b.start, b.pcm[:k])
                b.cut_front(k)
                b = head
            else:
                self.unsent.popleft()
            if not self._seg_pos or self.map(self.session_sent) != b.start:
                self._seg_pos.append(self.session_sent)
                self._seg_start.append(b.start)
            b.session_pos = self.session_sent
            self.session_sent += b.n
            self.sent.append(b)
            parts.append(b.pcm)
            got += b.n
            expect = b.start + b.n
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def map(self, pos: int, end: bool = False) -> int:
        """Stream position of session position ``pos`` (``end``: as the end of a span)."""
        if not self._seg_pos:
            return self.total_in
        i = (bisect.bisect_left if end else bisect.bisect_right)(self._seg_pos, pos) - 1
        i = max(i, 0)
        return self._seg_start[i] + (pos - self._seg_pos[i])

    # ------------------------------------------------------------------ text ----
    def on_token(self) -> tuple[int, int]:
        """A token of this session arrived: the stream span (samples) it covers."""
        k = self.session_tokens
        self.session_tokens += 1
        start = min(self.map(k * self.step), self.total_in)
        end = min(self.map((k + 1) * self.step, end=True), self.total_in)
        done = self.session_tokens * self.step
        while self.sent and self.sent[0].session_pos + self.sent[0].n <= done:
            self.held -= self.sent.popleft().n
        return start, max(start, end)

    def covered(self) -> bool:
        """Every sample sent into this session is covered by a token."""
        return self.session_tokens * self.step >= self.session_sent

    def end_session(self) -> int:
        """The session is over: what it did not cover goes back to be sent again.

        Returns the samples lost with it (dropped while in flight and never covered).
        """
        done = self.session_tokens * self.step
        lo, hi = done, min(self.risk_end, self.session_sent)
        lost = max(0, hi - lo)
        for i, pos in enumerate(self._seg_pos):  # stream intervals of [lo, hi), segment-wise
            end = self._seg_pos[i + 1] if i + 1 < len(self._seg_pos) else hi
            a, b = max(lo, pos), min(hi, end)
            if a < b:
                self._lose(self._seg_start[i] + (a - pos), b - a)
        requeue = []
        for block in self.sent:
            cut = done - block.session_pos
            if cut >= block.n:
                self.held -= block.n
                continue
            if cut > 0:
                block.cut_front(cut)
                self.held -= cut
            block.session_pos = -1
            requeue.append(block)
        self.sent.clear()
        self.unsent.extendleft(reversed(requeue))
        self.session_sent = self.session_tokens = self.risk_end = 0
        self._seg_pos.clear()
        self._seg_start.clear()
        return lost
