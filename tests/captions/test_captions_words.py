"""Deltas -> words, and line breaking by display width."""

from support.caption_helpers import deltas_from_pieces

from voxcap.captions.linebreak import display_width, split_to_width, wrap_words
from voxcap.captions.words import WordBuilder, clean_piece, ends_sentence, words_from_deltas


def test_clean_piece_drops_replacement_and_control_chars():
    assert clean_piece(" w17") == " w17"
    assert clean_piece("\ufffd") == ""
    assert clean_piece(" a\x00b\x07") == " ab"
    assert clean_piece("a\nb\tc\r") == "a b c "
    assert clean_piece(" مرحبا") == " مرحبا"
    assert clean_piece("\u200f") == "\u200f"  # format characters (RLM, ZWJ) are kept


def test_words_join_subword_pieces_with_their_audio_span():
    ds = deltas_from_pieces([" Hel", "lo", "", " wor", "ld", ",", "", "", " ok"])
    words = words_from_deltas(ds)
    assert [w.text for w in words] == ["Hello", "world,", "ok"]
    hello, world, ok = words
    assert (hello.start_s, hello.end_s) == (0.0, 0.16)
    assert (world.start_s, world.end_s) == (0.24, 0.48)
    assert (ok.start_s, ok.end_s) == (0.64, 0.72)
    assert not any(w.glue for w in words)


def test_streams_are_kept_apart():
    a = deltas_from_pieces([" one", " two"], stream_id="A")
    b = deltas_from_pieces([" un", "e", " deux"], stream_id="B")
    mixed = [a[0], b[0], a[1], b[1], b[2]]
    words = words_from_deltas(mixed)
    assert [(w.stream_id, w.text) for w in words if w.stream_id == "A"] == [("A", "one"), ("A", "two")]
    assert [w.text for w in words if w.stream_id == "B"] == ["une", "deux"]


def test_live_builder_commits_on_silence_and_marks_late_continuations_as_glue():
    b = WordBuilder("s", commit_on_silence=True)
    assert b.feed(" Hello", 0.0, 0.08) == []  # not complete yet: the next piece may continue it
    (hello,) = b.feed("", 0.08, 0.16)  # a step without text: shown now
    assert hello.text == "Hello" and not hello.glue
    assert b.feed("!", 0.16, 0.24) == []
    (bang,) = b.finish()
    assert bang.text == "!" and bang.glue


def test_pieces_with_inner_spaces_split_into_words():
    words = words_from_deltas(deltas_from_pieces([" New York", " City "]))
    assert [w.text for w in words] == ["New", "York", "City"]


def test_replacement_only_steps_count_as_silence():
    words = words_from_deltas(deltas_from_pieces([" a", "\ufffd", "\ufffd", " b"]))
    assert [w.text for w in words] == ["a", "b"]


def test_sentence_ends():
    assert ends_sentence("done.") and ends_sentence("what?\u201d") and ends_sentence("好。")
    assert not ends_sentence("e.g") and not ends_sentence("well,")


def test_display_width_counts_wide_and_zero_width_chars():
    assert display_width("abc") == 3
    assert display_width("日本語") == 6
    assert display_width("e\u0301") == 1  # e + combining acute
    assert display_width("\u200fשלום\u200f") == 4


def test_wrap_words_respects_width_and_keeps_every_word():
    words = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "again", "and", "again"]
    lines = wrap_words(words, 15)
    assert all(display_width(line) <= 15 for line in lines)
    assert " ".join(lines).split() == words


def test_wrap_cuts_words_longer_than_a_line():
    lines = wrap_words(["a", "x" * 25, "b"], 10)
    assert lines == ["a", "x" * 10, "x" * 10, "x" * 5 + " b"]
    assert split_to_width("日本語日本語", 4) == ["日本", "語日", "本語"]
