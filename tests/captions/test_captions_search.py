"""Search across the day's sessions, and what a Previous-sessions list shows of each (date,
time, length, state), on journals written by the journal itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.journal import Journal
from voxcap.captions.records import SESSION_NAME
from voxcap.captions.search import search_session, search_sessions, start_of_day
from voxcap.captions.sessions import SessionStore
from voxcap.events import LineTranslated, StreamFinished


def _said(journal, stream_id, label, pieces, first_index=0):
    journal.stream_opened(stream_id, label=label)
    deltas = deltas_from_pieces(pieces, stream_id, first_index)
    for d in deltas:
        journal.append(d)
    journal.stream_finished(StreamFinished(stream_id, "flushed", len(deltas), len(deltas) * 0.08))
    return deltas


def _backdate(journal, seconds):
    meta = json.loads((journal.dir / SESSION_NAME).read_text())
    meta["created_unix"] -= seconds
    (journal.dir / SESSION_NAME).write_text(json.dumps(meta))


def test_a_word_is_found_in_every_session_of_the_day(tmp_path):
    yesterday = Journal.create(root=tmp_path, session_id="yesterday")
    _said(yesterday, "y1", "Them", speech("the budget was late".split()))
    yesterday.close()
    _backdate(yesterday, 2 * 86400)

    morning = Journal.create(root=tmp_path, session_id="morning")
    # " bud" "get" : one word in two pieces; a sentence's end, then a pause of 2 s
    _said(morning, "m1", "Them", [" Our", " bud", "get", " is", " fine.", *[""] * 25,
                                  " Next", " item", " please"])
    # an engine restart: the speaker's second stream starts at 0 again on its own clock
    _said(morning, "m2", "Them", speech("we cut the BUDGET again".split()))
    morning.close()
    time.sleep(0.01)
    call = Journal.create(root=tmp_path, session_id="call")
    _said(call, "c1", "You", speech("what about the budget for next quarter".split()))
    call.close()

    hits = search_sessions("Budget", tmp_path, since=start_of_day())
    assert [(h.session_id, h.label) for h in hits] == [("morning", "Them"), ("morning", "Them"),
                                                        ("call", "You")]
    first, second, third = hits
    assert first.line == "Our budget is fine." and first.line[first.start:first.end] == "budget"
    assert first.at_s == pytest.approx(0.08)  # the word's first piece
    assert second.line == "we cut the BUDGET again"
    assert second.at_s == pytest.approx(33 * 0.08 + 3 * 0.08)  # after the first stream's audio
    assert third.line[third.start:third.end] == "budget"
    assert all(h.wall > 0 and h.session_created > start_of_day() for h in hits)

    assert [h.session_id for h in search_sessions("budget", tmp_path)][0] == "yesterday"
    phrase = search_sessions("  next   QUARTER", tmp_path)
    assert [(h.session_id, h.line[h.start:h.end]) for h in phrase] == [("call", "next quarter")]
    assert search_sessions("next item", tmp_path)[0].line == "Next item please"  # after the pause
    assert search_sessions("fine next", tmp_path) == []  # "fine." "Next": a sentence between
    assert search_sessions("   ", tmp_path) == []


def test_a_session_still_written_is_read_again_when_it_grows(tmp_path):
    journal = Journal.create(root=tmp_path, session_id="live")
    journal.stream_opened("s1", label="You")
    for d in deltas_from_pieces(speech("good morning everyone".split()), "s1"):
        journal.append(d)
    assert search_sessions("minutes", tmp_path) == []
    time.sleep(0.01)  # a new modification time
    for d in deltas_from_pieces(speech("the minutes are out".split()), "s1", first_index=3):
        journal.append(d)
    (hit,) = search_sessions("minutes", tmp_path)
    assert hit.line == "good morning everyone the minutes are out"
    assert search_session(journal.session(), "MINUTES")[0].at_s == hit.at_s
    journal.close()


WRITER = """
import sys, time
from voxcap.captions.journal import Journal
j = Journal.create(root=sys.argv[1], session_id="crashed")
j.stream_opened("s1", label="You")
j.paused() if sys.argv[2] == "paused" else None
print("ready", flush=True)
time.sleep(600)
"""


def test_the_list_says_date_time_length_and_state_in_full(tmp_path):
    done = Journal.create(root=tmp_path, session_id="done")
    time.sleep(0.3)
    done.paused()
    time.sleep(0.4)
    done.resumed()
    time.sleep(0.2)
    done.close()
    live = Journal.create(root=tmp_path, session_id="live")
    live.paused()

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), "running"],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "ready\n"
    infos = {i.session_id: i for i in SessionStore(tmp_path).list()}
    assert infos["crashed"].state == "in progress"  # another voxcap writes it now
    writer.kill()
    writer.wait(10)

    infos = {i.session_id: i for i in SessionStore(tmp_path).list()}
    assert infos["done"].state == "finished"
    assert infos["done"].length_s == pytest.approx(0.5, abs=0.1)  # 0.9 s less 0.4 s paused
    assert infos["live"].state == "paused"
    assert infos["crashed"].state == "interrupted" and infos["crashed"].interrupted
    assert infos["crashed"].length_s < 5
    row = infos["done"].summary()
    when = time.localtime(infos["done"].created)
    assert row.date == time.strftime("%Y-%m-%d", when) and row.time == time.strftime("%H:%M", when)
    assert (row.length, row.state) == ("<1 min", "finished")
    assert infos["crashed"].summary().state == "interrupted"
    live.close()
    os.sync()


def test_translations_are_found_and_say_they_are_translations(tmp_path):
    """Both texts of a translated session are searched: the words as heard and each line's
    translation (the journal's line records), a phrase across two lines' translations too."""
    journal = Journal.create(root=tmp_path, session_id="translated")
    first = "Je pense que nous devrions déplacer la réunion".split()
    second = "à jeudi après-midi.".split()
    _said(journal, "s1", "Them", speech(first + second))
    journal.on_event(LineTranslated("s1", 1, " ".join(first), 0.0, 8 * 0.08, "fr", "en",
                                    "I think we should move the"))
    journal.on_event(LineTranslated("s1", 2, " ".join(second), 8 * 0.08, 11 * 0.08, "fr", "en",
                                    "meeting to Thursday afternoon."))
    journal.close()

    (heard,) = search_sessions("réunion", tmp_path)
    assert heard.target == "" and heard.matched == "réunion"
    (translated,) = search_sessions("the  MEETING", tmp_path)  # across the two lines' pieces
    assert translated.target == "en" and translated.label == "Them"
    assert translated.line == "I think we should move the meeting to Thursday afternoon."
    assert translated.matched == "the meeting"
    assert translated.at_s == pytest.approx(0.0)  # where the line holding it starts
    (thursday,) = search_sessions("thursday", tmp_path)
    assert thursday.at_s == pytest.approx(8 * 0.08) and thursday.target == "en"
    assert [h.target for h in search_session(journal.session(), "thursday")] == ["en"]


def test_a_hit_is_found_in_the_transcript_by_speaker_text_and_place():
    """Where Previous sessions shows a hit: the n-th place its words are said by its speaker in
    its text (the original or the translation); masked since, the paragraph said at its time."""
    from voxcap.captions.search import SearchHit
    from voxcap.captions.transcript_find import match_span

    text = ("[00:00:01] Them: the budget is late\n"
            "    le budget est en retard\n"
            "[00:00:05] You: which budget? the budget\n"
            "[00:00:09] Them: the f*** budget again\n")

    def hit(label, target, at_s, word="budget"):
        return SearchHit("s", 0.0, label, at_s, 0.0, word, 0, len(word), target)
    spans = [text[a:b] for a, b in [match_span(text, hit("You", "", 6.0), 1, {"Them", "You"})]]
    assert spans == ["budget"]
    you_second = match_span(text, hit("You", "", 6.0), 1, {"Them", "You"})
    assert you_second[0] == text.index("the budget\n") + 4
    them_second = match_span(text, hit("Them", "", 9.0), 1, {"Them", "You"})
    assert them_second[0] == text.index("budget again")
    translated = match_span(text, hit("Them", "fr", 1.0), 0, {"Them", "You"})
    assert translated[0] == text.index("le budget") + 3
    masked = match_span(text, hit("Them", "", 9.2, "fuck"), 0, {"Them", "You"})
    assert text[masked[0]:masked[1]] == "the f*** budget again"  # its paragraph
