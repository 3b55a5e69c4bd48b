"""Known delta sequences for the captions tests."""

from __future__ import annotations

import re
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


def broadcast_cue_problems(text: str, *, min_s: float = 1.0, max_cps: float = 20.0,
                           max_lines: int = 2, max_chars: int = 42) -> list[str]:
    """The ways an SRT file breaks broadcast subtitle practice (BBC/Netflix): cues shorter than
    ``min_s`` (except the last cues crowded at the very end), faster than ``max_cps`` characters
    a second, more than ``max_lines`` lines or lines wider than ``max_chars``, a cue over the
    same speaker's next one (speakers are told apart by their "Label: " in front; two speakers at
    once may overlap, as players show them)."""
    import srt

    from voxcap.captions.linebreak import display_width

    problems = []
    subs = list(srt.parse(text))
    prev_end: dict[str, object] = {}
    speaker = None
    for n, s in enumerate(subs, 1):
        dur = (s.end - s.start).total_seconds()
        lines = s.content.split("\n")
        chars = sum(display_width(line) for line in lines)
        if dur < min_s - 1e-3:
            problems.append(f"cue {n}: {dur:.3f} s < {min_s} s")
        if chars / max(dur, 1e-3) > max_cps + 1e-6:
            problems.append(f"cue {n}: {chars} characters in {dur:.3f} s "
                            f"({chars / max(dur, 1e-3):.1f} cps)")
        if len(lines) > max_lines or max(display_width(x) for x in lines) > max_chars:
            problems.append(f"cue {n}: {len(lines)} lines, widest {max(map(display_width, lines))}")
        head = lines[0].partition(": ")
        speaker = head[0] if head[1] and " " not in head[0] else ""
        if speaker in prev_end and s.start < prev_end[speaker]:
            problems.append(f"cue {n} overlaps {speaker or 'the speaker'}'s one before")
        prev_end[speaker] = s.end
    return problems


def without_language_tags(history: str) -> str:
    """The history's text without the "[fr] " tags it puts before lines a moment after they end
    (their language): to check that what it showed before is still there."""
    return re.sub(r"\[(?:[a-z]{2}|other language)\] ", "", history)
