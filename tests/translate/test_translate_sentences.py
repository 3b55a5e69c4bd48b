"""Each finished caption line is translated alone at once, and a sentence the caption lines
split is translated again as one piece, through the real tiny CTranslate2 model: a line's own
translation comes without waiting for its sentence's end (the live displays), and when its last
line is finished the whole sentence goes to the translator once and its translation is spread
over its lines (each keeps its own stream, start and text), which the journal, its loader and
the exports keep in place of the lines' own; a sentence of one line is translated once; the
caption path never waits."""

from __future__ import annotations

import threading
import time

import pytest
from support.caption_helpers import deltas_from_pieces, speech
from support.tiny_translation import copy_package

from voxcap.app.line_sentences import SentenceGroups, spread
from voxcap.app.line_translation import LineTranslation
from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.export import render
from voxcap.captions.journal import Journal
from voxcap.captions.sessions import read_session_dir
from voxcap.captions.transcript_find import transcript_mode
from voxcap.events import LineTranslated, StreamFinished, StreamOpened
from voxcap.translate.package import PairTranslator, read_package

WIDTH = 30  # a narrow display: the sentence takes three lines
SENTENCE = "Je pense que nous devrions déplacer la réunion à jeudi après-midi."


@pytest.fixture
def models(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "models" / "fr_en", "fr", "en")
    return tmp_path / "models"


def _events(pieces, stream_end=True):
    events = [StreamOpened("s1", "Them", "system"), *deltas_from_pieces(pieces)]
    return events + ([StreamFinished("s1", "flushed", len(pieces), len(pieces) * 0.08)]
                     if stream_end else [])


def _lines_shown(events):
    shown = CaptionAssembler(width=WIDTH)
    for event in events:
        shown.on_event(event)
    return shown.history


def test_a_sentence_over_three_lines_is_translated_once_and_spread_over_them(models, tmp_path):
    journal = Journal.create({}, root=tmp_path / "sessions")
    seen: list[LineTranslated] = []
    lock = threading.Lock()

    def record(event: LineTranslated) -> None:
        with lock:
            journal.on_event(event)
            seen.append(event)
    lines = LineTranslation(record, target="en", models_dir=models, width=WIDTH, queue_lines=100)
    # a pause, then the next sentence on a line of its own: the first sentence's last line ends
    events = _events(speech(SENTENCE.split(), gap_steps=25) + speech("Merci beaucoup.".split()))
    for event in events:
        if not isinstance(event, StreamOpened):
            journal.on_event(event)
        lines.on_event(event)
    lines.close(drain_s=60)
    journal.close()

    shown = _lines_shown(events)
    first = [ln for ln in shown if ln.text != "Merci beaucoup."]
    assert len(first) == 3 and " ".join(ln.text for ln in first) == SENTENCE
    direct = PairTranslator(read_package(models / "fr_en"))
    whole = direct.translate([SENTENCE])[0]
    alone = [direct.translate([ln.text])[0] for ln in first]
    assert " ".join(alone).split() != whole.split()  # the test can tell them apart

    # each line first alone (the live displays), then its share of the sentence (the record)
    ours = [e for e in seen if e.text != "Merci beaucoup."]
    assert [(e.text, e.refined) for e in ours] == \
        [(ln.text, False) for ln in first] + [(ln.text, True) for ln in first]
    assert [e.translation for e in ours[:3]] == alone
    session = read_session_dir(journal.dir)
    records = [ln for ln in session.lines if ln.text != "Merci beaucoup."]
    # the journal holds both; its loader keeps one record a line (stream, start, text): matched
    # to the line shown...
    assert (journal.dir / "journal.jsonl").read_text().count('"type":"line"') == 7
    assert [(r.stream_id, r.start_s, r.text) for r in records] == \
        [(ln.stream_id, round(ln.start_s, 3), ln.text) for ln in first]
    # ...with its share of the whole sentence's translation
    assert " ".join(r.translation for r in records).split() == whole.split()
    assert all(r.translation and r.refined for r in records) and {r.target for r in records} == {"en"}
    assert [e.translation for e in ours[3:]] == [r.translation for r in records]
    merci = [e for e in seen if e.text == "Merci beaucoup."]  # a sentence of one line: once
    assert [e.refined for e in merci] == [False]
    translated_only = render(session, ".txt", translation="translation")[0]
    assert " ".join(translated_only.split()).startswith(" ".join(whole.split()))
    # the terminal's export takes the events as they came: the same
    assert render(session, ".txt", translation="translation", lines=seen)[0] == translated_only
    # Previous sessions shows the translations: every word said has its line's record...
    assert transcript_mode(session) == "both"
    session.lines.pop(1)  # ...unless a line has none (dropped by a translator behind)
    assert transcript_mode(session) == "original"


def test_a_line_is_translated_at_once_without_waiting_for_its_sentence_s_end(models):
    seen: list[LineTranslated] = []
    lines = LineTranslation(seen.append, target="en", models_dir=models, width=WIDTH,
                            hold_s=60.0)
    # the sentence's first two lines are finished (the next began); it goes on, not ended
    for event in _events(speech(SENTENCE.split(), gap_steps=2), stream_end=False):
        lines.on_event(event)
    deadline = time.monotonic() + 10  # the tiny model: well under a second a line
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    lines.close()
    direct = PairTranslator(read_package(models / "fr_en"))
    assert [(e.text, e.refined) for e in seen] == [("Je pense que nous devrions", False),
                                                   ("déplacer la réunion à jeudi", False)]
    assert [e.translation for e in seen] == direct.translate([e.text for e in seen])


def test_a_fragment_whose_sentence_does_not_end_is_translated_once(models):
    seen: list[LineTranslated] = []
    lines = LineTranslation(seen.append, target="en", models_dir=models, width=WIDTH,
                            hold_s=0.3)
    # a line without a sentence's end, finished by the next line, then nothing more arrives
    for event in _events(speech("Je pense que nous devrions partir".split(), gap_steps=2),
                         stream_end=False):
        lines.on_event(event)
    deadline = time.monotonic() + 30
    while not seen and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1.0)  # its hold ends: nothing more to translate
    lines.close()
    assert [(e.text, e.refined) for e in seen] == [("Je pense que nous devrions", False)]
    direct = PairTranslator(read_package(models / "fr_en"))
    assert seen[0].translation == direct.translate(["Je pense que nous devrions"])[0]


def test_the_caption_path_never_waits_for_a_sentence(models):
    lines = LineTranslation(lambda e: None, target="en", models_dir=models, width=WIDTH)
    waits = []
    for event in _events(speech((SENTENCE + " ") .split() * 6)):
        t = time.perf_counter()
        lines.on_event(event)
        waits.append(time.perf_counter() - t)
    lines.close(drain_s=60)
    assert max(waits) < 0.05


def test_sentences_group_and_spread():
    class Line:
        def __init__(self, text, stream_id="s1"):
            self.text, self.stream_id = text, stream_id
    groups: SentenceGroups[Line] = SentenceGroups(hold_s=4.0, max_lines=3)
    a, b, c = Line("Je pense que"), Line("nous partons. Et"), Line("puis")
    assert groups.add(a, 0.0) == [] and groups.add(b, 1.0) == [[a, b]]  # a sentence ends in it
    assert groups.add(c, 2.0) == [] and groups.due(5.9) == [] and groups.due(6.0) == [[c]]
    assert groups.next_due() is None
    many = [Line("un"), Line("deux"), Line("trois")]
    assert [groups.add(x, 0.0) for x in many][-1] == [many]  # at most three lines wait
    assert spread("I think we should leave now", [30, 10]) == ["I think we should", "leave now"]
    assert spread("one", [5, 5]) == ["", "one"]
    assert spread("我们应该走了", [3, 3]) == ["我们应", "该走了"]
