"""A sentence the caption lines split, translated whole (the real tiny CTranslate2 model through
``LineTranslation``), in an overlay of two lines: its whole translation under its last line,
none under the lines before (no words twice), so a reader still sees all of it when its first
line has scrolled away; a screen reader hears it once."""

from __future__ import annotations

import threading

import pytest
from support.caption_helpers import deltas_from_pieces, speech
from support.overlay_client import keep
from support.tiny_translation import make_package

from voxcap.app.caption_announcer import CaptionAnnouncer
from voxcap.app.line_translation import LineTranslation
from voxcap.app.settings import OverlaySettings
from voxcap.app.translation_settings import BOTH, TRANSLATION
from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import LineTranslated, StreamOpened
from voxcap.gui.overlay.window import CaptionOverlay
from voxcap.translate.package import PairTranslator, read_package
from voxcap.translate.worker import Translators

WIDTH = 30  # the sentence takes three lines
SENTENCE = "Je pense que nous devrions déplacer la réunion à jeudi après-midi."


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    make_package(root / "fr_en", "fr", "en")
    return root


def _said(models):
    """The events of the sentence, then the next one begun; the translator's events for them."""
    pieces = speech(SENTENCE.split(), gap_steps=25) + speech(["Merci"], gap_steps=2)
    events = [StreamOpened("s1", "Them", "system"), *deltas_from_pieces(pieces)]
    got: list[LineTranslated] = []
    lock = threading.Lock()

    def record(event: LineTranslated) -> None:
        with lock:
            got.append(event)
    # the tiny model's text is about a letter a token: as long as a real translation at 0.3
    lines = LineTranslation(record, target="en", width=WIDTH,
                            translators=Translators(models, length_ratio=0.3))
    for event in events:
        lines.on_event(event)
    lines.close(drain_s=60)
    return events[1:], got


@pytest.mark.parametrize("shown", [BOTH, TRANSLATION])
def test_a_sentence_s_translation_is_seen_whole_in_two_lines(qtbot, models, tmp_path, shown):
    deltas, translated = _said(models)
    whole = PairTranslator(read_package(models / "fr_en"), length_ratio=0.3).translate([SENTENCE])[0]
    ov = CaptionOverlay(OverlaySettings(lines=2, font_size=20))
    qtbot.addWidget(ov)
    ov.set_translation_shown(shown)
    ov.resize(1400, ov.fitted_height())
    asm = CaptionAssembler(width=WIDTH)
    for d in deltas:
        ov.add_updates(asm.feed(d))
    first, second, last, merci = asm.history
    assert [e.text for e in translated] == [first.text, second.text, last.text]
    for event in translated:
        ov.add_translation(event)
    rows = ov.visible_text()
    # the sentence's first lines have scrolled away; its translation is all under its last one
    assert first.text not in rows and " ".join(whole.split()) in " ".join(rows), (rows, whole)
    if shown == BOTH:  # under the sentence's last line, not under the line before
        assert whole.startswith(rows[rows.index(last.text) + 1])
        assert rows[rows.index(last.text) - 1] == second.text
    ov.grab().save(str(tmp_path / "overlay.png"))
    keep(tmp_path / "overlay.png", f"overlay-sentence-{shown}.png")

    tall = CaptionOverlay(OverlaySettings(lines=5, font_size=20))  # all its lines shown
    qtbot.addWidget(tall)
    tall.set_translation_shown(shown)
    tall.resize(1400, tall.fitted_height())
    asm = CaptionAssembler(width=WIDTH)
    for d in deltas:
        tall.add_updates(asm.feed(d))
    for event in translated:
        tall.add_translation(event)
    said = " ".join(tall.visible_text())
    assert said.count(" ".join(whole.split()[:3])) == 1  # no words twice


def test_a_screen_reader_hears_a_sentence_s_translation_once(models):
    deltas, translated = _said(models)
    whole = PairTranslator(read_package(models / "fr_en"), length_ratio=0.3).translate([SENTENCE])[0]
    for shown in (BOTH, TRANSLATION):
        ann = CaptionAnnouncer()
        ann.shown = shown
        asm = CaptionAssembler(width=WIDTH, labels={"s1": "Them"})
        for d in deltas:
            ann.feed(asm.feed(d), 0.0)
        told = [t for e in translated for t in ann.translated(e)]
        prefix = "Them, in English: " if shown == BOTH else "Them: "
        assert told == [prefix + whole], (shown, told)
