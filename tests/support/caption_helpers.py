"""Known delta sequences for the captions tests."""

from __future__ import annotations

import time

from voxcap.events import TextDelta

STEP = 0.08


def deltas_from_pieces(pieces, stream_id: str = "s1", first_index: int = 0,
                       audio_end: float | None = None) -> list[TextDelta]:
    """One delta per piece, 80 ms each, like the engine ("" = a step without text).

    ``audio_end`` clamps spans like the engine does for flush tokens past the audio's end."""
    out = []
    for k, text in enumerate(pieces, first_index):
        start, end = k * STEP, (k + 1) * STEP
        if audio_end is not None:
            start, end = min(start, audio_end), min(end, audio_end)
        out.append(TextDelta(stream_id, text, (1000 + k,), k, round(start, 6), round(end, 6),
                             time.time()))
    return out


def speech(words, gap_steps: int = 0) -> list[str]:
    """Pieces for ``words`` (each one step, leading space), ``gap_steps`` silent steps after."""
    return [f" {w}" for w in words] + [""] * gap_steps
