"""The history tags a line with its language where the speaker's language changes (and the
first time it is known), on the real widget fed as the app feeds it: the assembler's updates,
then ``LineTranslated``'s language a moment after each line ends."""

from __future__ import annotations

from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import TextDelta
from voxcap.framing import STEP_SECONDS
from voxcap.gui.main.history import HistoryView


class Speaker:
    """One stream's words, one 80 ms step each, into the assembler and the history."""

    def __init__(self, history: HistoryView, asm: CaptionAssembler, stream_id: str) -> None:
        self.history, self.asm, self.stream_id = history, asm, stream_id
        self.index = 0

    def step(self, text: str) -> None:
        i = self.index
        self.index += 1
        self.history.apply(self.asm.feed(TextDelta(self.stream_id, text, (), i, i * STEP_SECONDS,
                                                   (i + 1) * STEP_SECONDS, 0.0)))

    def say(self, words: str, pause: bool = True) -> tuple[float, float]:
        """The words, then (with ``pause``) 2 s of nothing: a new paragraph next. Their span."""
        start = self.index * STEP_SECONDS
        for w in words.split():
            self.step(" " + w)
            self.step("")
        end = self.index * STEP_SECONDS
        for _ in range(25 if pause else 0):
            self.step("")
        return start, end


def test_a_line_is_tagged_where_its_speakers_language_changes(qtbot):
    history = HistoryView()
    qtbot.addWidget(history)
    asm = CaptionAssembler(width=160, max_lines=5)
    s = Speaker(history, asm, "s1")
    spans = [s.say("bonjour à tous"), s.say("on commence"), s.say("guten Morgen"),
             s.say("short"), s.say("ciao a tutti")]
    for span, lang in zip(spans, ["fr", "fr", "de", "", "other"], strict=True):
        history.add_language("s1", *span, lang)
    text = [b.split("] ", 1)[1] for b in history.toPlainText().splitlines()]  # after the time
    assert text == ["[fr] bonjour à tous", "on commence", "[de] guten Morgen", "short",
                    "[other language] ciao a tutti"]


def test_a_tag_goes_before_its_line_also_when_the_paragraph_went_on(qtbot):
    history = HistoryView()
    qtbot.addWidget(history)
    asm = CaptionAssembler(width=20, max_lines=5)  # narrow: one paragraph, several lines
    s = Speaker(history, asm, "s1")
    first = s.say("the meeting moves to", pause=False)
    second = s.say("jeudi après-midi demain")
    history.add_language("s1", *second, "fr")  # the later line's language first
    history.add_language("s1", *first, "en")  # a line before a tagged one: too late to tell
    assert history.toPlainText().split("] ", 1)[1] == (
        "the meeting moves to [fr] jeudi après-midi demain")
    history.clear_history()
    s2 = Speaker(history, asm, "s2")
    history.add_language("s1", *second, "fr")  # nothing waits after clearing: no tag anywhere
    s2.say("hello")
    assert "[" not in history.toPlainText().split("] ", 1)[1]
