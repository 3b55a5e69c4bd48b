"""Cues follow broadcast subtitle practice (minimum duration, reading speed, two lines of 42),
and a session whose engine was restarted (a graph-mode switch: each speaker gets a new stream
whose audio times start at 0 again) exports as one continuous stream per speaker."""

import srt
from support.caption_helpers import broadcast_cue_problems, deltas_from_pieces, speech

from voxcap.captions.cues import build_cues
from voxcap.captions.export import render
from voxcap.captions.journal import Journal
from voxcap.captions.sessions import SessionStore, describe
from voxcap.captions.words import words_from_deltas
from voxcap.events import StreamFinished

WORDS = ("the quarterly report shows strong growth in every region and the board is pleased "
         "with the results of the last three months.").split()


def _talk(n_words: int, steps_per_word: int = 5) -> list[str]:
    """A speaker at a natural pace: a word every 400 ms (about 15 characters a second)."""
    out = []
    for i in range(n_words):
        out += speech([WORDS[i % len(WORDS)]], gap_steps=steps_per_word - 1)
    return out


def _journal_stream(journal, sid, label, pieces):
    journal.stream_opened(sid, label=label, source="Null Output")
    deltas = deltas_from_pieces(pieces, stream_id=sid)
    for d in deltas:
        journal.on_event(d)
    journal.on_event(StreamFinished(sid, "flushed", len(deltas), deltas[-1].audio_end_s))
    return deltas[-1].audio_end_s


def test_restarted_session_is_one_stream_per_speaker(tmp_path):
    journal = Journal.create({}, kind="live", root=tmp_path)
    first = _journal_stream(journal, "s1", "Them", _talk(40))
    second = _journal_stream(journal, "s2", "Them", _talk(40))  # times start at 0 again
    journal.close()
    store = SessionStore(tmp_path)
    session = store.open("last")

    text, cues, _ = render(session, ".srt")
    subs = list(srt.parse(text))
    assert "Them:" not in text  # one speaker: no label, as in the history
    assert broadcast_cue_problems(text) == []
    assert subs[-1].end.total_seconds() > first + second - 1.5  # the second stream follows
    assert cues == len(subs)
    vtt, _, _ = render(session, ".vtt")
    assert "<v " not in vtt
    assert describe(store.list()[0]).count("Them") == 1


def test_two_speakers_keep_their_labels_and_the_rules(tmp_path):
    """A conversation: turns, a little overlap where one answers the other."""
    journal = Journal.create({}, kind="live", root=tmp_path)
    _journal_stream(journal, "a", "You", _talk(20) + [""] * 110 + _talk(10))
    _journal_stream(journal, "b", "Them", [""] * 95 + _talk(20))
    journal.close()
    text, _, _ = render(SessionStore(tmp_path).open("last"), ".srt")
    assert "You: " in text and "Them: " in text
    assert broadcast_cue_problems(text) == []


def test_fast_speech_never_gives_flash_cues():
    """Text faster than anyone reads (a word every 80 ms): every cue still stays a second."""
    pieces = [f" w{i}" for i in range(300)]
    cues = build_cues(words_from_deltas(deltas_from_pieces(pieces)), end_s=30.0)
    assert min(c.end_ms - c.start_ms for c in cues) >= 1000
    assert all(len(c.lines) <= 2 and max(len(x) for x in c.lines) <= 42 for c in cues)
    assert all(a.end_ms <= b.start_ms for a, b in zip(cues, cues[1:], strict=False))


def test_reading_speed_is_capped_by_delaying_the_next_cue():
    # two full cues, each spoken in 1.9 s (about 42 characters a second), then silence
    words = [f"word{i:02d}" for i in range(24)]
    pieces = [p for w in words for p in (f" {w}", "")] + [""] * 100
    cues = build_cues(words_from_deltas(deltas_from_pieces(pieces)), end_s=len(pieces) * 0.08)
    assert len(cues) == 2
    for c in cues:
        chars = sum(len(x) for x in c.lines)
        assert chars / ((c.end_ms - c.start_ms) / 1000) <= 20.0 + 1e-6
    spoken = 12 * 2 * 80  # the second cue's first word
    assert spoken < cues[1].start_ms <= spoken + 3000  # it waits, at most 3 s behind the speech
