"""Cue timing and shape rules, with known delta sequences."""

import itertools
import random

from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.cues import CueOptions, build_cues, build_paragraphs
from voxcap.captions.linebreak import display_width
from voxcap.captions.words import words_from_deltas

OPTS = CueOptions()


def check_rules(cues, end_ms=None, opts=OPTS):
    assert cues, "no cues"
    for c in cues:
        assert 0 <= c.start_ms < c.end_ms
        assert c.end_ms - c.start_ms <= opts.max_duration_s * 1000
        assert 1 <= len(c.lines) <= opts.max_lines
        assert all(0 < display_width(line) <= opts.max_chars for line in c.lines)
    assert [c.start_ms for c in cues] == sorted(c.start_ms for c in cues)
    for sid in {c.stream_id for c in cues}:  # each speaker's own: two at once may overlap
        own = [c for c in cues if c.stream_id == sid]
        for a, b in itertools.pairwise(own):
            assert a.start_ms < b.start_ms
            assert a.end_ms <= b.start_ms
    if end_ms is not None:
        assert max(c.end_ms for c in cues) <= end_ms


def test_continuous_speech_is_cut_into_readable_cues():
    words = [f"word{i}" for i in range(200)]  # 200 steps of non-stop speech: 16 s
    cues = build_cues(words_from_deltas(deltas_from_pieces(speech(words))), end_s=16.0)
    # ~100 characters a second make more cues than seconds: they share the audio's time
    # evenly (none flashes), each at most 3 s behind its words, none past the audio's end
    assert len(cues) > 16
    check_rules(cues, 16000)
    assert min(c.end_ms - c.start_ms for c in cues[:-1]) >= 600
    assert cues[-1].end_ms == 16000  # its words were said in the audio's last 240 ms
    for c in cues:
        spoken_ms = words.index(c.lines[0].split()[0]) * 80
        assert spoken_ms <= c.start_ms <= spoken_ms + 3000
    assert " ".join(" ".join(c.lines) for c in cues).split() == words


def test_cue_times_come_from_the_audio_spans():
    pieces = [""] * 25 + speech(["Hello", "world."]) + [""] * 50 + speech(["Again."])
    cues = build_cues(words_from_deltas(deltas_from_pieces(pieces)), end_s=10.0)
    check_rules(cues, 10000)
    assert [c.lines for c in cues] == [("Hello world.",), ("Again.",)]
    assert cues[0].start_ms == 2000  # step 25
    assert cues[1].start_ms == 6160  # step 77
    # short cues stay up for at least the minimum duration, inside the silence after them
    assert cues[0].end_ms - cues[0].start_ms >= 1000
    assert cues[1].end_ms - cues[1].start_ms >= 1000


def test_a_pause_ends_a_cue():
    pieces = speech(["one", "two"], gap_steps=12) + speech(["three"], gap_steps=1)
    cues = build_cues(words_from_deltas(deltas_from_pieces(pieces)))
    assert [c.lines for c in cues] == [("one two",), ("three",)]


def test_sentence_end_ends_a_cue_once_it_holds_half_a_line():
    words = ["This", "is", "the", "first", "sentence.", "Then", "another", "one."]
    cues = build_cues(words_from_deltas(deltas_from_pieces(speech(words))))
    assert [c.text for c in cues] == ["This is the first sentence.", "Then another one."]


def test_text_flushed_at_the_end_of_the_audio_gets_time_before_it():
    # the engine clamps flush tokens past the audio's end to the end: zero-length spans
    pieces = speech(["hello"]) + [""] * 30 + speech(["late", "words"])
    ds = deltas_from_pieces(pieces, audio_end=2.0)
    cues = build_cues(words_from_deltas(ds), end_s=2.0)
    check_rules(cues, 2000)
    assert cues[-1].text == "late words"
    assert cues[-1].end_ms == 2000 and cues[-1].end_ms - cues[-1].start_ms >= 1000


def test_overlapping_streams_give_labelled_cues_each_on_its_own_clock():
    you = deltas_from_pieces(speech(["I", "think", "we", "should", "go"], 2), stream_id="mic")
    them = deltas_from_pieces([""] * 2 + speech(["yes", "yes"], 2), stream_id="sys")
    words = words_from_deltas(you + them)
    cues = build_cues(words, {"mic": "You", "sys": "Them"}, show_labels=True)
    check_rules(cues)
    assert cues[0].lines[0].startswith("You: I think") and cues[0].label == "You"
    assert cues[1].lines == ("Them: yes yes",)
    assert cues[1].start_ms == 160 and cues[0].end_ms > cues[1].start_ms  # "yes" while "I think"


def test_same_step_in_two_streams():
    a = deltas_from_pieces(speech(["a"], 1), stream_id="A")
    b = deltas_from_pieces(speech(["b"], 1), stream_id="B")
    check_rules(build_cues(words_from_deltas(a + b), show_labels=True))


def test_random_sequences_obey_the_rules():
    rng = random.Random(1234)
    for trial in range(30):
        streams = []
        for sid in ("A", "B")[: rng.randint(1, 2)]:
            pieces = []
            for _ in range(rng.randint(1, 600)):
                r = rng.random()
                if r < 0.5:
                    pieces.append("")
                elif r < 0.55:
                    pieces.append(rng.choice([".", ",", "ing", "?"]))
                else:
                    pieces.append(" " + "".join(rng.choice("abcdéשל日") for _ in range(rng.randint(1, 14))))
            streams += deltas_from_pieces(pieces, stream_id=sid, audio_end=len(pieces) * 0.08 - 0.3)
        words = words_from_deltas(streams)
        if not words:
            continue
        end = max(d.audio_end_s for d in streams)
        cues = build_cues(words, show_labels=True, end_s=end)
        check_rules(cues)
        for sid in {w.stream_id for w in words}:  # every word, in order, once
            shown = "".join("".join(c.text_lines) for c in cues if c.stream_id == sid)
            spoken = "".join(w.text for w in words if w.stream_id == sid)
            assert shown.replace(" ", "") == spoken, f"text lost in trial {trial}"


def test_paragraphs_break_at_pauses_and_interleave_streams():
    you = deltas_from_pieces(speech(["hello", "there."], 30) + speech(["bye."]), stream_id="m")
    them = deltas_from_pieces([""] * 5 + speech(["hi!"]), stream_id="s")
    paras = build_paragraphs(words_from_deltas(you + them), {"m": "You", "s": "Them"})
    assert [(p.label, p.text) for p in paras] == [
        ("You", "hello there."), ("Them", "hi!"), ("You", "bye.")]


def _conversation(seconds: float, seed: int):
    """Two people talking over each other at a conversational rate (~2.5 words a second each,
    sentences of 4-12 words, pauses of 0.2-1.2 s): "Both" on a lively call."""
    rng = random.Random(seed)
    streams = []
    for sid in ("mic", "sys"):
        pieces: list[str] = [""] * rng.randint(0, 10)
        while len(pieces) * 0.08 < seconds:
            n = rng.randint(4, 12)
            for i in range(n):
                word = rng.choice(["well", "the", "meeting", "budget", "tomorrow", "fine", "we"])
                pieces += [f" {word}{'.' if i == n - 1 else ''}"] + [""] * rng.randint(3, 5)
            pieces += [""] * rng.randint(2, 15)
        streams += deltas_from_pieces(pieces, stream_id=sid)
    return streams


def test_two_speakers_at_once_each_get_readable_cues():
    """Each speaker's cues keep the rules on their own (at least 1 s, no overlap with the same
    speaker's next cue); two speakers at once overlap, labelled, as players show them: before,
    one timeline for both cut them into 0.1 s cues that alternated."""
    deltas = _conversation(60.0, seed=7)
    end = max(d.audio_end_s for d in deltas)
    cues = build_cues(words_from_deltas(deltas), {"mic": "You", "sys": "Them"}, show_labels=True,
                      end_s=end)
    for sid in ("mic", "sys"):
        own = [c for c in cues if c.stream_id == sid]
        check_rules(own, round(end * 1000))
        short = [c.end_ms - c.start_ms for c in own[:-1] if c.end_ms - c.start_ms < 1000]
        assert not short, f"{sid}: {len(short)} of {len(own)} cues under 1 s: {short[:8]}"
    assert [c.start_ms for c in cues] == sorted(c.start_ms for c in cues)
    assert any(a.stream_id != b.stream_id and b.start_ms < a.end_ms
               for a, b in itertools.pairwise(cues)), "speakers talking at once overlap"


def test_a_conversation_in_text_is_interleaved_by_turns():
    """TXT: a speaker's paragraph ends where the other one takes a turn, so the transcript
    reads as the conversation went (before: minutes-long blocks per speaker)."""
    deltas = _conversation(60.0, seed=7)
    paras = build_paragraphs(words_from_deltas(deltas), {"mic": "You", "sys": "Them"})
    assert max(p.end_s - p.start_s for p in paras) < 20
    assert [p.start_s for p in paras] == sorted(p.start_s for p in paras)
    turns = sum(a.label != b.label for a, b in itertools.pairwise(paras))
    assert turns >= len(paras) // 2
