"""Live caption assembly: append-only lines, widths, pauses, labels, masking."""

import random

from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.linebreak import display_width
from voxcap.captions.masking import Masker
from voxcap.events import StreamFinished


def feed_all(asm, deltas):
    updates = []
    for d in deltas:
        updates.extend(asm.feed(d))
    return updates


def test_lines_fill_to_width_then_break():
    asm = CaptionAssembler(width=20, max_lines=2)
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    feed_all(asm, deltas_from_pieces(speech(words, gap_steps=1)))
    texts = [line.text for line in asm.history]
    assert texts == ["one two three four", "five six seven eight", "nine ten"]
    assert [line.text for line in asm.visible()] == texts[-2:]
    assert all(display_width(t) <= 20 for t in texts)


def test_text_shown_is_never_revised():
    """Every update appends exactly ``added`` to what was shown; nothing shown changes."""
    rng = random.Random(7)
    vocab = ["a", "word", "longerword", "x" * 30, "é", "日本語", "مرحبا"]
    pieces = []
    for _ in range(400):
        r = rng.random()
        pieces.append("" if r < 0.4 else (rng.choice([",", "ing", "."]) if r < 0.5
                                          else " " + rng.choice(vocab)))
    asm = CaptionAssembler(width=16, pause_s=0.5)
    shown: dict[int, str] = {}
    for u in feed_all(asm, deltas_from_pieces(pieces)) + asm.finish("s1"):
        before = "" if u.new_line else shown[u.line.line_id]
        assert u.new_line == (u.line.line_id not in shown)
        assert u.line.text == before + u.added
        shown[u.line.line_id] = u.line.text
    assert {line.line_id: line.text for line in asm.history} == shown
    glue_overflow = 3
    assert all(display_width(t) <= 16 + glue_overflow for t in shown.values())
    joined = "".join(pieces).split()
    assert "".join("".join(shown.values()).split()) == "".join(joined)


def test_pause_starts_a_new_paragraph_line():
    asm = CaptionAssembler(width=42, pause_s=1.0)
    pieces = speech(["hello", "there."], gap_steps=13) + speech(["hi", "again"], gap_steps=1)
    feed_all(asm, deltas_from_pieces(pieces))
    lines = asm.history
    assert [(line.text, line.paragraph_start) for line in lines] == [
        ("hello there.", True), ("hi again", True)]
    assert lines[0].final and not lines[1].final
    assert lines[1].start_s - lines[0].end_s >= 1.0


def test_short_pause_does_not_break():
    asm = CaptionAssembler(width=42, pause_s=1.0)
    pieces = speech(["hello"], gap_steps=5) + speech(["there"], gap_steps=1)
    feed_all(asm, deltas_from_pieces(pieces))
    assert [line.text for line in asm.history] == ["hello there"]


def test_two_streams_get_labelled_interleaved_lines():
    asm = CaptionAssembler(width=42)
    asm.set_label("mic", "You")
    asm.set_label("sys", "Them")
    you = deltas_from_pieces(speech(["good", "morning"], 1), stream_id="mic")
    them = deltas_from_pieces(speech(["hello", "hello"], 1), stream_id="sys")
    for a, b in zip(you, them, strict=False):
        asm.feed(a)
        asm.feed(b)
    asm.on_event(StreamFinished("mic", "flushed", 3, 0.24))
    got = [(line.label, line.text, line.final) for line in asm.history]
    assert got == [("You", "good morning", True), ("Them", "hello hello", False)]


def test_unlabelled_stream_uses_its_id():
    asm = CaptionAssembler()
    feed_all(asm, deltas_from_pieces(speech(["x"], 1), stream_id="7"))
    assert asm.history[0].label == "7"


def test_continuation_after_shown_word_is_glued_not_moved():
    asm = CaptionAssembler(width=10)
    feed_all(asm, deltas_from_pieces([" abcdefghij", "", ".", "", " next", ""]))
    assert [line.text for line in asm.history] == ["abcdefghij.", "next"]


def test_masking_applies_to_display():
    asm = CaptionAssembler(masker=Masker(["damn", "shit*"]))
    feed_all(asm, deltas_from_pieces(speech(["Damn,", "this", "shitty", "dam"], 1)))
    assert asm.history[0].text == "D***, this s***** dam"


def test_a_swear_word_cut_by_a_silent_step_is_never_shown_whole():
    """Live, a word is shown after a step without text; its later pieces are glued to it. The
    glued rest of a masked word is masked as the whole word is, whatever was shown first."""
    asm = CaptionAssembler(masker=Masker(["shit*", "fuck*"]))
    feed_all(asm, deltas_from_pieces([" Oh", " sh", "", "it", "", ",", " fuck", "", "ing", "",
                                      " good", "", "s.", ""]))
    assert asm.history[0].text == "Oh sh**, f****** goods."
    unmasked = CaptionAssembler()
    feed_all(unmasked, deltas_from_pieces([" Oh", " sh", "", "it", ""]))
    assert unmasked.history[0].text == "Oh shit"


def test_finish_of_unknown_stream_is_harmless():
    asm = CaptionAssembler()
    assert asm.finish("nope") == []
    assert asm.on_event(object()) == []
