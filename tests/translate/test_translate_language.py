"""The language of a finished line, on real sentences in several of the model's 13 languages and
in languages outside them (py3langid's real model; nothing stubbed)."""

from __future__ import annotations

import pytest

from voxcap.translate.detect import (
    LanguageDetector,
    LineLanguages,
    OtherLanguageWatch,
    other_language_notice,
)
from voxcap.translate.languages import OTHER

SENTENCES = {
    "en": "I think we should move the meeting to Thursday afternoon.",
    "fr": "Je pense que nous devrions déplacer la réunion à jeudi après-midi.",
    "es": "Creo que deberíamos mover la reunión al jueves por la tarde.",
    "de": "Ich glaube, wir sollten das Treffen auf Donnerstagnachmittag verschieben.",
    "ru": "Я думаю, нам стоит перенести встречу на четверг после обеда.",
    "zh": "我觉得我们应该把会议改到星期四下午。",
    "ja": "会議を木曜日の午後に移したほうがいいと思います。",
    "it": "Penso che dovremmo spostare la riunione a giovedì pomeriggio.",
    "pt": "Acho que devíamos mudar a reunião para quinta-feira à tarde.",
    "nl": "Ik denk dat we de vergadering naar donderdagmiddag moeten verplaatsen.",
    "ar": "أعتقد أنه يجب علينا نقل الاجتماع إلى بعد ظهر يوم الخميس.",
    "hi": "मुझे लगता है कि हमें बैठक को गुरुवार दोपहर तक टाल देना चाहिए।",
    "ko": "회의를 목요일 오후로 옮기는 게 좋을 것 같아요.",
}
OUTSIDE = {  # none of the 13
    "pl": "Myślę, że powinniśmy przenieść spotkanie na czwartek po południu.",
    "sv": "Jag tycker att vi borde flytta mötet till torsdag eftermiddag.",
    "tr": "Bence toplantıyı perşembe öğleden sonraya ertelemeliyiz.",
}


@pytest.fixture(scope="module")
def detector() -> LanguageDetector:
    return LanguageDetector()


@pytest.mark.parametrize("code", sorted(SENTENCES))
def test_each_of_the_13_languages_is_told(detector, code):
    guess = detector.detect(SENTENCES[code])
    assert guess.language == code
    assert guess.confidence > 0.5


@pytest.mark.parametrize("code", sorted(OUTSIDE))
def test_a_language_outside_the_13_is_other(detector, code):
    guess = detector.detect(OUTSIDE[code])
    assert guess.language == OTHER
    assert guess.detected == code


def test_a_short_line_takes_the_streams_language(detector):
    assert detector.detect("Okay.").language == ""  # alone it cannot tell
    lines = LineLanguages(detector)
    lines.of_line("a", SENTENCES["de"])
    guess, _ = lines.of_line("a", "Ja, genau.")
    assert guess.language == "de" and guess.confidence == 0.0
    assert lines.of_line("b", "Ja, genau.")[0].language == ""  # another stream has none yet


def test_the_notice_waits_for_two_lines_and_is_said_once(detector):
    lines = LineLanguages(detector)
    said = [lines.of_line("a", s)[1] for s in
            (SENTENCES["en"], OUTSIDE["pl"], SENTENCES["en"], OUTSIDE["pl"], OUTSIDE["sv"],
             OUTSIDE["tr"], OUTSIDE["pl"])]
    assert said == [False, False, False, False, True, False, False]


def test_speech_coming_back_to_the_13_rearms_the_notice(detector):
    watch = OtherLanguageWatch(lines=1)
    pl = detector.detect(OUTSIDE["pl"])
    assert [watch.observe(pl), watch.observe(pl)] == [True, False]
    watch.observe(detector.detect(SENTENCES["fr"]))
    assert watch.observe(pl)


def test_the_notice_names_the_problem_in_one_line(detector):
    text = other_language_notice("Them", detector.detect(OUTSIDE["pl"]))
    assert "\n" not in text and "none of the 13 languages" in text and "'pl'" in text
