"""Translated captions through the captions path for real: deltas -> finished lines -> the line
worker with the tiny CTranslate2 model -> LineTranslated -> the journal -> a session read back ->
SRT/VTT/TXT exports with the original, the translation, both, or a file per language. The
translation is attached to the line it translates; switching it off removes it; a translation
forced slow never delays the caption path."""

from __future__ import annotations

import time

import pytest
import webvtt
from support.caption_helpers import deltas_from_pieces, speech
from support.tiny_translation import copy_package

from voxcap.app.line_translation import LineTranslation
from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.export import export, render
from voxcap.captions.journal import Journal
from voxcap.captions.sessions import read_session_dir
from voxcap.events import LineTranslated, StreamFinished, StreamOpened
from voxcap.translate.package import PairTranslator, read_package
from voxcap.translate.worker import Translators

SENTENCES = [  # each is one caption line (< 42 columns), a pause after each
    "Je pense que nous devrions partir bientôt.".split(),
    "Le train arrive avec du retard ce soir.".split(),
    "Merci beaucoup pour votre aide précieuse.".split(),
]


def _events():
    pieces = []
    for words in SENTENCES:
        pieces += speech(words, gap_steps=25)  # 2 s of silence: a new line
    return [StreamOpened("s1", "Them", "system"), *deltas_from_pieces(pieces),
            StreamFinished("s1", "flushed", len(pieces), len(pieces) * 0.08)]


@pytest.fixture
def models(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "models" / "fr_en", "fr", "en")
    return tmp_path / "models"


def _run(models, tmp_path, target: str, translators=None):
    journal = Journal.create({}, root=tmp_path / "sessions")
    seen: list[LineTranslated] = []

    def record(event: LineTranslated) -> None:
        journal.on_event(event)
        seen.append(event)
    lines = LineTranslation(record, target=target, models_dir=models, translators=translators,
                            queue_lines=100)
    waits = []
    for event in _events():
        if not isinstance(event, StreamOpened):
            journal.on_event(event)
        t = time.perf_counter()
        lines.on_event(event)
        waits.append(time.perf_counter() - t)
    lines.close(drain_s=60)
    journal.close()
    return read_session_dir(journal.dir), seen, waits


def test_each_line_gets_its_own_translation_in_the_journal_and_exports(models, tmp_path):
    session, seen, _ = _run(models, tmp_path, "en")
    direct = PairTranslator(read_package(models / "fr_en"))
    texts = [" ".join(words) for words in SENTENCES]
    assert [ln.text for ln in session.lines] == texts
    shown = CaptionAssembler()  # what a display made of the same events: the same line ids
    for event in _events():
        shown.on_event(event)
    assert [(ln.line_id, ln.stream_id, ln.start_s, ln.text) for ln in session.lines] == \
        [(ln.line_id, ln.stream_id, round(ln.start_s, 3), ln.text) for ln in shown.history]
    assert [ln.language for ln in session.lines] == ["fr"] * 3
    for ln in session.lines:  # attached to the line it translates, not a neighbour
        assert ln.target == "en" and ln.translation == direct.translate([ln.text])[0]
    assert [(e.line_id, e.translation) for e in seen] == \
        [(ln.line_id, ln.translation) for ln in session.lines]

    both = render(session, ".vtt", translation="both")[0]
    cues = list(webvtt.from_string(both))
    assert len(cues) == 3
    for cue, ln in zip(cues, session.lines, strict=True):
        assert cue.raw_text.splitlines()[0].startswith("<lang fr>" + ln.text.split()[0])
        assert f"<lang en>{ln.translation.split()[0]}" in cue.raw_text
    alone = render(session, ".srt", translation="translation")[0]
    assert all(ln.translation.split()[0] in alone and ln.text not in alone for ln in session.lines)
    original = render(session, ".vtt")[0]
    assert "<lang fr>" in original and session.lines[0].translation not in original
    assert render(session, ".srt", language_tags=True)[0].count("[fr] ") >= 3

    out = tmp_path / "talk.srt"
    export(session, out, translation="separate")
    assert session.lines[0].translation not in out.read_text(encoding="utf-8")
    assert session.lines[0].translation.split()[0] in (tmp_path / "talk.en.srt").read_text(
        encoding="utf-8")
    txt = render(session, ".txt", translation="both")[0]
    assert txt.splitlines()[:2] == [session.lines[0].text, "    " + session.lines[0].translation]


def test_translation_switched_off_keeps_languages_and_removes_translations(models, tmp_path):
    session, _, _ = _run(models, tmp_path, "")
    assert [(ln.language, ln.target, ln.translation) for ln in session.lines] == [("fr", "", "")] * 3
    both = render(session, ".srt", translation="both")[0]
    assert [c for c in both.split("\n\n") if c] and all(
        " ".join(w) in both for w in SENTENCES)  # the originals only


class SlowTranslators(Translators):
    def get(self, source, target):
        real = super().get(source, target)

        class Slow:
            def translate(self, texts):
                time.sleep(1.0)
                return real.translate(texts)
        return Slow()


def test_a_slow_translation_never_delays_the_caption_path(models, tmp_path):
    _, _, fast = _run(models, tmp_path / "a", "")
    session, _, slow = _run(models, tmp_path / "b", "en", SlowTranslators(models))
    assert max(slow) < 0.05 and sorted(slow)[len(slow) // 2] < 0.005, (max(slow), max(fast))
    assert all(ln.translation for ln in session.lines)  # and still, every line was translated


def test_an_old_journal_without_line_records_still_loads(tmp_path):
    journal = Journal.create({}, root=tmp_path)
    for event in _events()[1:]:
        journal.on_event(event)
    journal.close()
    session = read_session_dir(journal.dir)
    assert session.lines == []
    assert "Je pense" in render(session, ".srt")[0]
    assert render(session, ".srt", translation="both") == render(session, ".srt")  # as heard
