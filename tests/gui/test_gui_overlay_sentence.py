"""A sentence the caption lines split (the real tiny CTranslate2 model through
``LineTranslation``): each line's own translation comes first, then its share of the sentence's
translation (``refined``). The overlay shows each line's own translation and never rewrites one
on screen (a line that has none yet takes its share); a screen reader hears each line's own
translation once, never the sentence's again; the history keeps the share in its place."""

from __future__ import annotations

import threading

import pytest
from support.caption_helpers import deltas_from_pieces, speech
from support.overlay_client import keep
from support.tiny_translation import make_package

from voxcap.app.caption_announcer import CaptionAnnouncer
from voxcap.app.line_translation import LineTranslation, line_key
from voxcap.app.settings import OverlaySettings
from voxcap.app.translation_settings import BOTH, TRANSLATION
from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import LineTranslated, StreamOpened
from voxcap.gui.main.history import HistoryView
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


@pytest.fixture(scope="module")
def said(models):
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


def _overlay(qtbot, shown, deltas, lines=2):
    ov = CaptionOverlay(OverlaySettings(lines=lines, font_size=20))
    qtbot.addWidget(ov)
    ov.set_translation_shown(shown)
    ov.resize(1400, ov.fitted_height())
    asm = CaptionAssembler(width=WIDTH)
    for d in deltas:
        ov.add_updates(asm.feed(d))
    return ov, asm.history


@pytest.mark.parametrize("shown", [BOTH, TRANSLATION])
def test_the_overlay_shows_each_line_s_own_translation_and_never_rewrites_it(qtbot, models,
                                                                             tmp_path, said, shown):
    deltas, translated = said
    alone = PairTranslator(read_package(models / "fr_en"), length_ratio=0.3)
    ov, (first, second, last, _merci) = _overlay(qtbot, shown, deltas)
    own = [e for e in translated if not e.refined]
    shares = [e for e in translated if e.refined]
    assert [e.text for e in own] == [e.text for e in shares] == [first.text, second.text, last.text]
    assert [e.translation for e in own] == alone.translate([e.text for e in own])
    assert [e.translation for e in shares] != [e.translation for e in own]  # the test can tell
    for event in own:
        ov.add_translation(event)
    before = ov.visible_text()
    assert " ".join(own[2].translation.split()) in " ".join(before)  # under its line, at once
    if shown == BOTH:
        assert rows_after(before, last.text) == own[2].translation.split()[0]
    for event in shares:
        ov.add_translation(event)
    assert ov.visible_text() == before  # what the reader has on screen stays
    ov.grab().save(str(tmp_path / "overlay.png"))
    keep(tmp_path / "overlay.png", f"overlay-sentence-{shown}.png")

    # a line whose own translation never came (a translator behind) takes its share
    late, _ = _overlay(qtbot, shown, deltas)
    late.add_translation(own[1])
    late.add_translation(shares[2])
    assert " ".join(shares[2].translation.split()) in " ".join(late.visible_text())


def rows_after(rows: list[str], text: str) -> str:
    """The first word of the row under the one that is ``text``."""
    return rows[rows.index(text) + 1].split()[0]


def test_a_screen_reader_hears_each_line_s_own_translation_once(said):
    deltas, translated = said
    own = [e for e in translated if not e.refined]
    for shown in (BOTH, TRANSLATION):
        ann = CaptionAnnouncer()
        ann.shown = shown
        asm = CaptionAssembler(width=WIDTH, labels={"s1": "Them"})
        for d in deltas:
            ann.feed(asm.feed(d), 0.0)
        told = [t for e in translated for t in ann.translated(e)]
        prefix = "Them, in English: " if shown == BOTH else "Them: "
        assert told == [prefix + e.translation for e in own], (shown, told)


def test_the_history_keeps_a_line_s_share_of_its_sentence_in_place_of_its_own(qtbot, said):
    _deltas, translated = said
    history = HistoryView()
    qtbot.addWidget(history)
    for e in translated:
        history.add_translation(e.translation, e.language, e.target,
                                line_key(e.stream_id, e.start_s), e.refined)
    notes = history.toPlainText().splitlines()
    shares = [e for e in translated if e.refined]
    assert notes == [f"    [fr→en] {e.translation}" for e in shares]
