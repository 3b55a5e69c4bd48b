"""Caption lines for screen readers: once per line, when finished, speaker first; a pause
mid-line tells what was said so far and the rest comes once, later; a line's translation as the
user shows it (after the line, or instead of it)."""

from __future__ import annotations

from voxcap.app.caption_announcer import CaptionAnnouncer
from voxcap.app.translation_settings import BOTH, TRANSLATION
from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import LineTranslated, StreamFinished, TextDelta


def _delta(sid, text, t):
    return TextDelta(stream_id=sid, text=text, token_ids=(), index=0, produced_at=0.0,
                     audio_start_s=t, audio_end_s=t + 0.08)


def _words(asm, ann, sid, words, t0, now):
    said = []
    for i, w in enumerate(words):
        said += ann.feed(asm.feed(_delta(sid, w, t0 + 0.3 * i)), now)
    return said


def test_each_line_once_speaker_first_not_per_word():
    asm = CaptionAssembler(width=40)
    asm.set_label("a", "Them")
    asm.set_label("b", "You")
    ann = CaptionAnnouncer()
    said = _words(asm, ann, "a", [" hello", " there", " how", " are", " you", " doing",
                                  " this", " fine", " morning", " my", " friend", " of", " old"],
                  0.0, 0.0)
    said += _words(asm, ann, "b", [" fine", " thanks"], 0.0, 0.5)
    said += ann.feed(asm.finish("a"), 1.0) + ann.feed(asm.finish("b"), 1.0)
    assert said[0].startswith("Them: hello there how are you")
    assert said[-2:] == [said[-2], "You: fine thanks"] and said[-2].startswith("Them: ")
    assert " ".join(s.split(": ", 1)[1] for s in said if s.startswith("Them")) == \
        "hello there how are you doing this fine morning my friend of old"
    assert len(said) == 3  # two lines of Them (40 columns), one of You: not one per word


def test_a_pause_mid_line_tells_it_then_only_the_rest():
    asm = CaptionAssembler(width=80)
    asm.set_label("a", "Them")
    ann = CaptionAnnouncer(idle_s=2.0)
    _words(asm, ann, "a", [" wait", " for", " it"], 0.0, 10.0)
    assert ann.idle(11.0) == []
    assert ann.idle(12.5) == ["Them: wait for"]  # "it" may still grow: held as words are
    assert ann.idle(20.0) == []  # told once
    _words(asm, ann, "a", [" now"], 1.0, 21.0)
    assert ann.feed(asm.on_event(StreamFinished("a", "end", 0, 1.0)), 22.0) == ["Them: it now"]


def _french_lines(ann):
    """Two finished lines of "Them" (a pause between them), told to ``ann``; the lines."""
    asm = CaptionAssembler(width=80)
    asm.set_label("a", "Them")
    said = _words(asm, ann, "a", [" bonjour", " à", " tous"], 0.0, 1.0)
    said += _words(asm, ann, "a", [" merci", " beaucoup"], 3.0, 4.0)
    said += ann.feed(asm.on_event(StreamFinished("a", "end", 0, 4.0)), 4.5)
    return said, [line for line in asm.history]


def _translated(line, text, line_id=99, refined=False):
    """The translator's event for ``line``: its own line number, the same stream and times."""
    return LineTranslated(line.stream_id, line_id, line.text, line.start_s, line.end_s, "fr", "en",
                          text, refined)


def test_both_tells_each_line_then_its_translation_when_it_comes():
    ann = CaptionAnnouncer()
    ann.shown = BOTH
    said, lines = _french_lines(ann)
    assert said == ["Them: bonjour à tous", "Them: merci beaucoup"]  # as fast as without
    assert ann.translated(_translated(lines[0], "hello everyone")) == \
        ["Them, in English: hello everyone"]
    assert ann.translated(_translated(lines[1], "")) == []  # not translated: nothing more


def test_translation_only_tells_the_translation_instead_matched_by_stream_and_start():
    ann = CaptionAnnouncer(translation_wait_s=3.0)
    ann.shown = TRANSLATION
    said, lines = _french_lines(ann)
    assert said == []  # held for their translations
    assert ann.idle(5.0) == []
    # the second line's translation first, numbered as the translator numbers it
    assert ann.translated(_translated(lines[1], "thanks a lot", line_id=1)) == ["Them: thanks a lot"]
    assert ann.translated(_translated(lines[0], "hello everyone", line_id=7)) == \
        ["Them: hello everyone"]
    assert ann.idle(30.0) == []  # each told once


def test_translation_only_tells_the_original_when_no_translation_comes():
    ann = CaptionAnnouncer(translation_wait_s=3.0)
    ann.shown = TRANSLATION
    _said, lines = _french_lines(ann)
    assert ann.translated(_translated(lines[0], "")) == ["Them: bonjour à tous"]  # not translated
    assert ann.idle(6.0) == []
    assert ann.idle(7.6) == ["Them: merci beaucoup"]  # dropped by a translator behind: still told


def test_translation_only_tells_a_translation_that_comes_after_the_original():
    """A translator behind: when the original was told meanwhile, the line's translation is told
    when it comes all the same, saying its language."""
    ann = CaptionAnnouncer()
    ann.shown = TRANSLATION
    _said, lines = _french_lines(ann)
    assert ann.idle(ann.translation_wait_s + 5) == ["Them: bonjour à tous", "Them: merci beaucoup"]
    assert ann.translated(_translated(lines[0], "hello everyone")) == \
        ["Them, in English: hello everyone"]
    assert ann.translated(_translated(lines[0], "hello everyone")) == []  # once


def test_a_line_s_share_of_its_sentence_is_never_told():
    """Each line's own translation is told once; its share of its sentence's translation, which
    comes later (``refined``), is not told again, nor in place of one that did not come."""
    for shown in (BOTH, TRANSLATION):
        ann = CaptionAnnouncer()
        ann.shown = shown
        _said, lines = _french_lines(ann)
        told = ann.translated(_translated(lines[0], "hello everyone"))
        assert told == [("Them, in English: " if shown == BOTH else "Them: ") + "hello everyone"]
        assert ann.translated(_translated(lines[0], "hello all", refined=True)) == []
        assert ann.translated(_translated(lines[1], "thanks a lot", refined=True)) == []
        assert ann.idle(ann.translation_wait_s + 5) == (["Them: merci beaucoup"]
                                                         if shown == TRANSLATION else [])


def test_original_only_ignores_translations():
    ann = CaptionAnnouncer()
    said, lines = _french_lines(ann)
    assert said == ["Them: bonjour à tous", "Them: merci beaucoup"]
    assert ann.translated(_translated(lines[0], "hello everyone")) == []
