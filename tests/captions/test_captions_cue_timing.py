"""SRT/VTT cues against the audio clock: realistic speech (espeak-ng's own word durations) gets
cues as subtitle guidelines time them (BBC/Netflix: at least 1 s, at most 7 s, at most 20
characters a second, two lines of 42, in sync with the words), and a 15-minute session with
text faster than anyone reads (the tiny model: ~70 characters a second per stream, two
streams) ends within its audio instead of drifting ever later (it ran to 25 minutes)."""

from __future__ import annotations

import subprocess
import wave
from functools import cache

import numpy as np
import pytest
import srt
from support.caption_helpers import broadcast_cue_problems, deltas_from_pieces

from voxcap.captions.cues import build_cues
from voxcap.captions.export import render
from voxcap.captions.journal import Journal
from voxcap.captions.sessions import SessionStore
from voxcap.captions.words import words_from_deltas
from voxcap.events import StreamFinished

THEM = ("Good morning everyone. Thanks for joining the quarterly review. The report shows strong "
        "growth in every region, and the board is pleased with the results. We will go through "
        "the numbers first, then the plans for next year. Please hold your questions until the "
        "end.").split()
YOU = ("Could you repeat the last number? I did not hear it clearly. Also, when will the slides "
       "be shared with the team?").split()
STEP = 0.08


@cache
def _espeak_seconds(word: str) -> float:
    """How long espeak-ng says ``word`` (its wav without the silence around it)."""
    out = subprocess.run(["espeak-ng", "--stdout", word], capture_output=True, check=True,
                         timeout=30).stdout
    import io

    with wave.open(io.BytesIO(out)) as w:
        rate = w.getframerate()
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32)
    loud = np.flatnonzero(np.abs(samples) > 0.02 * 32768)
    return (loud[-1] - loud[0]) / rate if loud.size else 0.1


def _spoken(words, start_s: float) -> tuple[list[tuple[str, float, float]], float]:
    """Words timed as espeak-ng says them: its durations, 0.1 s between words, 0.5 s after a
    sentence; (word, start, end) each and the end."""
    out, t = [], start_s
    for w in words:
        d = _espeak_seconds(w.strip(".,?"))
        out.append((w, t, t + d))
        t += d + (0.5 if w[-1] in ".?" else 0.1)
    return out, t


def _pieces(timed, total_s: float) -> list[str]:
    """One 80 ms step each, a word in the step where it starts (as the engine emits them)."""
    pieces = [""] * (int(total_s / STEP) + 1)
    for w, start, _ in timed:
        k = int(start / STEP)
        while pieces[k]:
            k += 1
        pieces[k] = " " + w
    return pieces


def test_realistic_speech_gets_guideline_cues_in_sync_with_its_words(tmp_path):
    them, t = _spoken(THEM, 0.4)
    you, end = _spoken(YOU, t + 1.0)  # a turn: You answer after Them
    total = end + 1.0
    journal = Journal.create(root=tmp_path, session_id="call")
    for sid, label, timed in (("sys", "Them", them), ("mic", "You", you)):
        journal.stream_opened(sid, label=label)
        deltas = deltas_from_pieces(_pieces(timed, total), stream_id=sid)
        for d in deltas:
            journal.append(d)
        journal.stream_finished(StreamFinished(sid, "flushed", len(deltas), total))
    journal.close()
    text, n, _ = render(SessionStore(tmp_path).open("call"), ".srt")
    assert broadcast_cue_problems(text) == []  # >= 1 s, <= 20 cps, 2 x 42, no overlaps
    subs = list(srt.parse(text))
    assert n == len(subs) >= 8
    durations = [(s.end - s.start).total_seconds() for s in subs]
    assert max(durations) <= 7.0 and len(set(durations)) > n // 2, durations  # not all 1.0 s
    for s in subs:  # each cue shows while (or up to 3 s after) its first word is said
        first = s.content.split("\n")[0].split(": ", 1)[-1].split()[0]
        said = [start for w, start, _ in them + you if w == first]
        assert any(t - 0.08 <= s.start.total_seconds() <= t + 3.0 for t in said), (s, said)
    assert subs[-1].end.total_seconds() <= total


def test_a_15_minute_session_ends_within_its_audio(tmp_path):
    seconds = 15 * 60
    journal = Journal.create(root=tmp_path, session_id="long")
    rng = np.random.default_rng(0)
    for sid, label in (("sys", "Them"), ("mic", "You")):
        journal.stream_opened(sid, label=label)
        # the tiny model's rate: a piece of ~5.6 characters every 80 ms, ~70 a second
        pieces = [" " + "abcdefg"[: int(rng.integers(3, 8))] for _ in range(int(seconds / STEP))]
        deltas = deltas_from_pieces(pieces, stream_id=sid)
        for d in deltas:
            journal.append(d)
        journal.stream_finished(StreamFinished(sid, "flushed", len(deltas), seconds))
    journal.close()
    session = SessionStore(tmp_path).open("long")
    for fmt in (".srt", ".vtt"):
        text, n, _ = render(session, fmt)
        subs = list(srt.parse(text)) if fmt == ".srt" else None
        if subs:
            assert subs[-1].end.total_seconds() <= seconds  # was 00:25:14 for 14.9 minutes
            for label in ("Them", "You"):  # each speaker's cues never overlap each other
                own = [x for x in subs if x.content.startswith(f"{label}: ")]
                assert all(a.end <= b.start for a, b in zip(own, own[1:], strict=False))
    records, labels, end_s = session.timeline()
    cues = build_cues(words_from_deltas(records), labels, show_labels=True, end_s=end_s)
    assert end_s == pytest.approx(seconds)
    assert max(c.end_ms for c in cues) <= seconds * 1000
    spoken = sorted(round(w.start_s * 1000) for w in words_from_deltas(records))
    assert max(c.start_ms - spoken[0] for c in cues[:1]) <= 3000
    durations = [c.end_ms - c.start_ms for c in cues]
    assert np.median(durations) >= 300  # the time shared evenly, no flashes


def test_the_export_is_named_after_when_the_session_started(tmp_path):
    import time

    from voxcap.captions.export import default_name

    journal = Journal.create(root=tmp_path)
    journal.close()
    session = SessionStore(tmp_path).open("last")
    when = time.localtime(session.info.created)
    assert default_name(session, ".vtt") == time.strftime("captions %Y-%m-%d %H-%M.vtt", when)
    assert session.session_id not in default_name(session)
