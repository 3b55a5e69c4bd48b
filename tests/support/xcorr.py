"""Comparing captured audio with what was played: aligned normalised cross-correlation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr


@dataclass(frozen=True)
class Match:
    r: float  # normalised correlation of the aligned signals (1.0: same waveform up to gain)
    lag: int  # where the reference starts in the captured audio (samples)
    gain: float  # captured / reference amplitude at the alignment


def load_16k(path: str | Path) -> np.ndarray:
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    return soxr.resample(mono, rate, 16000).astype(np.float32) if rate != 16000 else mono


def match(reference: np.ndarray, captured: np.ndarray) -> Match:
    """Best alignment of ``reference`` inside ``captured`` and how alike they are there."""
    ref = np.asarray(reference, np.float64)
    # the capture may stop inside the reference's trailing silence: what it lacks counts as
    # silence, so the reference may start up to its whole length before the capture's end (else
    # 18 ms missing of a silent tail leaves the true lag out of reach and r falls to ~0.1)
    cap = np.concatenate([np.asarray(captured, np.float64), np.zeros(ref.size)])
    n = 1 << int(np.ceil(np.log2(cap.size + ref.size)))
    xc = np.fft.irfft(np.fft.rfft(cap, n) * np.conj(np.fft.rfft(ref, n)), n)[: cap.size - ref.size + 1]
    lag = int(np.argmax(xc))
    seg = cap[lag: lag + ref.size]
    denom = np.linalg.norm(ref) * np.linalg.norm(seg)
    r = float(np.dot(ref, seg) / denom) if denom > 0 else 0.0
    gain = float(np.dot(ref, seg) / np.dot(ref, ref)) if np.dot(ref, ref) > 0 else 0.0
    return Match(r, lag, gain)


@dataclass(frozen=True)
class Tracked:
    r: float  # energy-weighted mean of the windows' correlations, each at its own lag
    lag: int  # where the reference starts in the captured audio (at its first aligned window)
    slips: tuple[int, ...]  # lag changes between aligned windows (samples; < 0: audio lost there)
    windows: int  # windows with sound in the reference
    aligned: int  # of which correlate >= 0.9 at their lag

    @property
    def lost(self) -> int:
        """Samples of the reference missing between its aligned windows."""
        return -sum(self.slips)

    def __str__(self) -> str:
        return (f"Tracked(r={self.r:.3f}, lag={self.lag}, {self.aligned}/{self.windows} windows aligned, "
                f"slips={list(self.slips)})")


def match_tracked(reference: np.ndarray, captured: np.ndarray, window: int = 1600, drop: int = 512,
                  jitter: int = 8, search: int = 800) -> Tracked:
    """Like ``match``, but window by window (``window`` samples), each window at its own lag:
    the previous aligned window's, less up to ``drop`` samples (audio lost between them), plus
    up to ``jitter``. ``search``: how far from ``match``'s lag the first window is looked for.

    Why: a sound server short of CPU skips graph cycles, and what they carried never reaches
    the recording: it slips by one or a few quanta there (PipeWire 0.3.65, recording one
    stream under load: 5-11 ms at a time, up to 32 ms after a 0.1 s stall; ``parec
    --monitor-stream`` alone too). Speech 5 ms apart does not correlate: one slip in the middle
    halves ``match``'s r, although every part of it is the app's waveform, in order. Here such
    a recording still matches; audio that is foreign, missing for more than ``drop``, repeated
    or out of order is not followed (the windows after it stay unaligned, with their low r).
    ``lost`` says how much went missing in the slips."""
    ref = np.asarray(reference, np.float64)
    cap = np.asarray(captured, np.float64)
    offset = match(ref, cap).lag
    pad = search + drop + window
    cap = np.concatenate([np.zeros(pad), cap, np.zeros(pad + ref.size)])
    csum = np.concatenate([[0.0], np.cumsum(cap * cap)])
    quiet = 0.01 * float(np.dot(ref, ref)) / max(1, ref.size) * window  # 20 dB under the mean
    first, anchored = offset, False
    num = den = 0.0
    slips: list[int] = []
    windows = aligned = 0
    for s in range(0, ref.size, window):
        seg = ref[s: s + window]
        energy = float(np.dot(seg, seg))
        if energy <= quiet:
            continue
        windows += 1
        below, above = (drop, jitter) if anchored else (search, search)
        lo = pad + offset + s - below
        xc = np.correlate(cap[lo: lo + below + above + seg.size], seg, "valid")
        power = csum[lo + seg.size: lo + seg.size + xc.size] - csum[lo: lo + xc.size]
        # (the floor: a cumulative sum's rounding must not make near-silence correlate)
        r = xc / np.sqrt(np.maximum(power, 1e-4 * energy) * energy)
        best = int(np.argmax(r))
        num += energy * float(r[best])
        den += energy
        if r[best] >= 0.9:
            aligned += 1
            new = offset + best - below
            if anchored and new != offset:
                slips.append(new - offset)
            if not anchored:
                first, anchored = new, True
            offset = new
    return Tracked(num / den if den else 0.0, first, tuple(slips), windows, aligned)


def rms(x: np.ndarray) -> float:
    x = np.asarray(x, np.float64)
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0
