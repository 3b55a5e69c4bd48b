"""Audio files in, 16 kHz mono float32 blocks out (streamed: hours-long files stay small in memory)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from .errors import AudioFileError
from .framing import SAMPLE_RATE, STEP_SECONDS

FORMATS_HINT = "use WAV, FLAC, OGG/Opus/Vorbis or MP3 (convert others with `ffmpeg -i IN out.wav`)"


@dataclass(frozen=True)
class AudioFileInfo:
    path: Path
    rate: int
    channels: int
    frames: int

    @property
    def seconds(self) -> float:
        return self.frames / self.rate if self.rate else 0.0


def probe(path: str | Path) -> AudioFileInfo:
    """Check that ``path`` is a readable, non-empty audio file; raise AudioFileError if not."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise AudioFileError(f"Audio file not found: {p}", "check the path")
    try:
        info = sf.info(str(p))
    except (sf.LibsndfileError, RuntimeError, OSError) as exc:
        raise AudioFileError(f"Cannot read {p.name} as audio ({str(exc).strip()[:120]}): "
                             "unsupported or corrupt file", FORMATS_HINT) from None
    frames = info.frames
    if frames <= 0 or frames >= 2**62:  # some decoders (MP3) report an unknown length as huge
        frames = sum(len(b) for b in _raw_blocks(p, 65536)) if frames > 0 else 0
    if frames == 0:
        raise AudioFileError(f"{p.name} contains no audio (0 samples): nothing to transcribe",
                             "record or export the audio again")
    return AudioFileInfo(p, int(info.samplerate), int(info.channels), int(frames))


def _raw_blocks(path: Path, blocksize: int) -> Iterator[np.ndarray]:
    try:
        with sf.SoundFile(str(path)) as f:
            while True:
                block = f.read(blocksize, dtype="float32", always_2d=True)
                if not len(block):
                    return
                yield block
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise AudioFileError(f"{path.name} is corrupt: decoding failed mid-file ({exc})",
                             FORMATS_HINT) from None


def to_mono(block: np.ndarray) -> np.ndarray:
    """Average all channels (channel 0 alone can be silent or one-sided)."""
    return block.mean(axis=1, dtype=np.float32) if block.ndim == 2 else block.astype(np.float32)


# libsndfile's MP3 decoder returns garbage for small reads (seen with 1-4k frames on 1.2.x):
# always read large raw blocks and cut the resampled output into small ones.
_RAW_BLOCK = 65536


def iter_blocks(path: str | Path, block_seconds: float = STEP_SECONDS) -> Iterator[np.ndarray]:
    """Yield 16 kHz mono float32 blocks of ``block_seconds`` (the last may be shorter)."""
    info = probe(path)
    size = max(1, int(SAMPLE_RATE * block_seconds))
    resampler = None if info.rate == SAMPLE_RATE else soxr.ResampleStream(
        info.rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
    pending = np.zeros(0, np.float32)
    for raw in _raw_blocks(info.path, _RAW_BLOCK):
        mono = to_mono(raw)
        out = mono if resampler is None else resampler.resample_chunk(mono)
        pending = np.concatenate([pending, out.astype(np.float32, copy=False)])
        while pending.size >= size:
            yield np.ascontiguousarray(pending[:size])
            pending = pending[size:]
    if resampler is not None:
        tail = resampler.resample_chunk(np.zeros(0, np.float32), last=True)
        pending = np.concatenate([pending, tail.astype(np.float32, copy=False)])
    for i in range(0, pending.size, size):
        yield np.ascontiguousarray(pending[i:i + size])


def read_all(path: str | Path) -> np.ndarray:
    """The whole file as one 16 kHz mono float32 array (for short files and tests)."""
    blocks = list(iter_blocks(path))
    return np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
