"""The line worker: each finished line gets its language and its translation (the real tiny
CTranslate2 model), attached to that line; the caption side never waits, even when translation
is forced slow; problems are said once in one line and lines go on untranslated."""

from __future__ import annotations

import threading
import time

import pytest
from support.tiny_translation import copy_package

from voxcap.commands.flag_words import in_flags
from voxcap.translate.package import PairTranslator, read_package
from voxcap.translate.worker import FinishedLine, LineResult, LineWorker, Translators

FRENCH = ["Je pense que nous devrions déplacer la réunion à jeudi après-midi.",
          "Bonjour à tous, merci d'être venus si nombreux ce matin.",
          "Le train de dix heures est annoncé avec vingt minutes de retard."]
ENGLISH = "I think we should move the meeting to Thursday afternoon."


class Collect:
    def __init__(self) -> None:
        self.results: list[LineResult] = []
        self.notices: list[str] = []
        self.done = threading.Condition()

    def result(self, r: LineResult) -> None:
        with self.done:
            self.results.append(r)
            self.done.notify_all()

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def wait(self, n: int, timeout_s: float = 30.0) -> list[LineResult]:
        with self.done:
            assert self.done.wait_for(lambda: len(self.results) >= n, timeout_s), self.results
            return list(self.results)


@pytest.fixture
def models(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    return tmp_path


def _lines(texts, stream="s1"):
    return [FinishedLine(i + 1, stream, t, float(i), float(i) + 1.0, "Them") for i, t in enumerate(texts)]


def test_each_translation_is_attached_to_its_own_line(models):
    got = Collect()
    worker = LineWorker(target="en", translators=Translators(models), on_result=got.result,
                        on_notice=got.notice).start()
    lines = _lines(FRENCH + [ENGLISH])
    for line in lines:
        worker.submit(line)
    results = got.wait(4)
    worker.stop()
    direct = PairTranslator(read_package(models / "fr_en"))
    assert [r.line for r in results] == lines
    assert [r.language for r in results] == ["fr", "fr", "fr", "en"]
    for r in results[:3]:
        assert r.target == "en" and r.translation == direct.translate([r.line.text])[0]
    assert results[3].translation == "" and results[3].target == ""  # already in English
    assert got.notices == []


def test_translation_switched_off_gives_languages_only(models):
    got = Collect()
    worker = LineWorker(target=None, translators=Translators(models), on_result=got.result).start()
    for line in _lines(FRENCH[:2]):
        worker.submit(line)
    results = got.wait(2)
    worker.stop()
    assert [(r.language, r.translation, r.target) for r in results] == [("fr", "", "")] * 2


class SlowTranslators(Translators):
    """The real translators, each line held ``delay_s`` first: translation forced slow."""

    def __init__(self, root, delay_s: float) -> None:
        super().__init__(root)
        self.delay_s = delay_s

    def get(self, source, target):
        real = super().get(source, target)
        delay = self.delay_s

        class Slow:
            def translate(self, texts):
                time.sleep(delay)
                return real.translate(texts)
        return Slow()


def test_slow_translation_never_holds_the_captions_and_keeps_the_latest(models):
    got = Collect()
    worker = LineWorker(target="en", translators=SlowTranslators(models, 0.5), on_result=got.result,
                        on_notice=got.notice, queue_lines=2).start()
    lines = _lines(FRENCH * 4)
    waits = []
    for line in lines:
        t = time.perf_counter()
        worker.submit(line)
        waits.append(time.perf_counter() - t)
    assert max(waits) < 0.01  # the caption path only queues
    deadline = time.monotonic() + 60
    while not worker.idle() and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.stop()
    done = [r.line.line_id for r in got.results]
    assert done and done[-1] == 12 and len(done) <= 4  # the latest lines, not a backlog
    assert worker.dropped >= 8
    assert len([n for n in got.notices if "cannot keep up" in n]) == 1


def test_lines_go_before_sentences_and_a_sentence_gives_way_first(models, caplog):
    """A sentence (translated again as one piece) waits while lines wait: the live displays
    show lines; when the queue is full a sentence is dropped first, said in the log only."""
    got = Collect()
    worker = LineWorker(target="en", translators=Translators(models), on_result=got.result,
                        on_notice=got.notice, queue_lines=3)  # not started: all wait

    def sentence(line_id, *parts):
        return FinishedLine(line_id, "s1", " ".join(p.text for p in parts), parts[0].start_s,
                            parts[-1].end_s, "Them", parts)
    a, b, c, d = _lines(["Je pense que nous", "devrions partir.", "Le train de dix heures",
                         "est en retard."])
    first, second = sentence(2, a, b), sentence(4, c, d)
    assert first.refined and not a.refined
    with caplog.at_level("INFO", logger="voxcap.translate.worker"):
        for item in (first, c, second, d):  # the fourth: the oldest sentence gives way
            worker.submit(item)
        worker.submit(sentence(5, c, d))  # and again: the other sentence, not a line
    assert worker.dropped_sentences == 2 and worker.dropped == 0
    worker.start()
    results = got.wait(3)
    worker.stop()
    assert [(r.line.line_id, r.line.refined) for r in results] == [(3, False), (4, False), (5, True)]
    assert results[2].translation and not got.notices  # the user is not told: lines are there
    assert len([r for r in caplog.records if "whole sentences dropped" in r.getMessage()]) == 1


def test_no_model_for_the_pair_is_said_once_and_lines_go_on(models):
    got = Collect()
    worker = LineWorker(target="de", translators=Translators(models), on_result=got.result,
                        on_notice=got.notice).start()
    for line in _lines(FRENCH):
        worker.submit(line)
    results = got.wait(3)
    worker.stop()
    assert [(r.language, r.translation) for r in results] == [("fr", "")] * 3
    assert len(got.notices) == 1 and "\n" not in got.notices[0]
    assert "French to German" in got.notices[0]
    assert "translate-models download fr-de" in in_flags(got.notices[0])


def test_a_line_whose_language_cannot_be_told_is_said_once(models):
    got = Collect()
    worker = LineWorker(target="en", translators=Translators(models), on_result=got.result,
                        on_notice=got.notice).start()
    for line in _lines(["Oui.", "Ah bon ?"]):
        worker.submit(line)
    results = got.wait(2)
    worker.stop()
    assert [(r.language, r.translation) for r in results] == [("", "")] * 2
    assert len(got.notices) == 1 and "language could not be told" in got.notices[0]


def test_a_corrupt_installed_model_is_said_once_and_lines_go_on(models):
    model = models / "fr_en" / "model" / "model.bin"
    model.write_bytes(model.read_bytes()[:200])  # a disk error, a killed copy
    got = Collect()
    worker = LineWorker(target="en", translators=Translators(models), on_result=got.result,
                        on_notice=got.notice).start()
    for line in _lines(FRENCH):
        worker.submit(line)
    results = got.wait(3)
    worker.stop()
    assert [(r.language, r.translation) for r in results] == [("fr", "")] * 3
    assert len(got.notices) == 1 and "fr-en translation model is corrupt" in got.notices[0]
    assert "translate-models remove fr-en" in in_flags(got.notices[0])
