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
    cap = np.asarray(captured, np.float64)
    if cap.size < ref.size:
        cap = np.concatenate([cap, np.zeros(ref.size - cap.size)])
    n = 1 << int(np.ceil(np.log2(cap.size + ref.size)))
    xc = np.fft.irfft(np.fft.rfft(cap, n) * np.conj(np.fft.rfft(ref, n)), n)[: cap.size - ref.size + 1]
    lag = int(np.argmax(xc))
    seg = cap[lag: lag + ref.size]
    denom = np.linalg.norm(ref) * np.linalg.norm(seg)
    r = float(np.dot(ref, seg) / denom) if denom > 0 else 0.0
    gain = float(np.dot(ref, seg) / np.dot(ref, ref)) if np.dot(ref, ref) > 0 else 0.0
    return Match(r, lag, gain)


def rms(x: np.ndarray) -> float:
    x = np.asarray(x, np.float64)
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0
