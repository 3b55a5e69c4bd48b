"""The feed without a network: journal + live events joined without repeats, new sessions,
masking, and each viewer's bounded queue."""

from __future__ import annotations

import json

from voxcap.captions.journal import Journal
from voxcap.captions.masking import make_masker
from voxcap.events import CaptioningState, LineTranslated
from voxcap.share.feed import CaptionFeed


def _text(feed) -> list[str]:
    return " ".join(ln["text"] for ln in feed.snapshot()["lines"]).split()


def test_journal_then_live_without_repeats(script, tmp_path):
    journal = Journal.create({"model": "test"}, kind="test", root=tmp_path)
    feed = CaptionFeed()
    held = []
    s = script(lambda ev: (journal.on_event(ev), held.append(ev)), session_id=journal.session_id)
    journal.stream_opened(s.stream_id, label=s.label, source="test")
    s.say(8)
    feed.load(journal.session())  # what was journalled, then the live events: some seen twice
    for ev in held[-6:]:
        feed.on_event(ev)
    s.say(3)
    for ev in held[-6:]:
        feed.on_event(ev)
    assert _text(feed) == s.words
    assert feed.snapshot()["session"] == journal.session_id
    assert feed.labels == {s.stream_id: "Them"}
    journal.close()


def test_a_new_session_starts_empty(script):
    feed = CaptionFeed()
    s = script(feed.on_event)
    s.say(3)
    s.finish()
    feed.on_event(CaptioningState("off", "sess-1"))
    assert _text(feed) == ["w0", "w1", "w2"]  # the last session stays up while off
    first_ids = [ln["id"] for ln in feed.snapshot()["lines"]]
    feed.on_event(CaptioningState("starting", "sess-2"))
    assert _text(feed) == [] and feed.snapshot()["session"] == "sess-2"
    script(feed.on_event, session_id="sess-2").say(2)
    assert feed.snapshot()["lines"][0]["id"] > max(first_ids)  # ids never repeat


def test_lines_become_final_when_the_next_starts(script):
    feed = CaptionFeed()
    got = []
    v = feed.add_viewer(lambda: None)
    s = script(feed.on_event)  # a new session: the viewer starts with its snapshot
    assert [json.loads(m)["type"] for m in v.take()] == ["snapshot"]
    s.say(4, pause_every=2)
    s.say(1)
    for text in v.take():
        got.append(json.loads(text))
    finals = [m["text"] for m in got if m["type"] == "line" and m["final"]]
    assert finals == ["w0 w1", "w2 w3"]
    assert all(m["seq"] == got[0]["seq"] + i for i, m in enumerate(got))


def test_masking_applies_to_what_is_shared(script):
    feed = CaptionFeed(masker=make_masker(True))
    s = script(feed.on_event)
    s.delta(" fuck")
    s.delta(" off")
    s.delta("")
    shown = " ".join(_text(feed))
    assert "fuck" not in shown and shown.endswith("off")


def test_a_viewer_that_falls_behind_gets_a_snapshot_not_a_backlog(script):
    feed = CaptionFeed(viewer_queue=10)
    wakes = []
    v = feed.add_viewer(lambda: wakes.append(1))
    s = script(feed.on_event)
    assert json.loads(v.take()[0])["type"] == "snapshot"
    s.say(5)
    assert len(v.pending) == 5 and not v.resync
    s.say(100)
    assert v.pending == type(v.pending)() and v.resync and v.skips == 1  # nothing piles up
    (msg,) = v.take()
    snap = json.loads(msg)
    assert snap["type"] == "snapshot" and _text(feed) == s.words
    assert " ".join(ln["text"] for ln in snap["lines"]).split() == s.words
    assert wakes


def test_a_lines_language_from_the_journal_and_live(script, tmp_path):
    """The feed's lines are wider than the app's: a language goes to the feed line its audio
    overlaps, live and when the feed is rebuilt from the journal."""
    journal = Journal.create({"model": "test"}, kind="test", root=tmp_path)
    live = CaptionFeed()
    s = script(lambda ev: (journal.on_event(ev), live.on_event(ev)), session_id=journal.session_id)
    journal.stream_opened(s.stream_id, label=s.label, source="test")
    s.say(4, pause_every=2)
    s.say(1)
    for ev in (LineTranslated(s.stream_id, 0, "w0 w1", 0.0, 0.3, "es"),
               LineTranslated(s.stream_id, 1, "w2 w3", 2.2, 2.8, "")):  # too short to tell
        journal.on_event(ev)
        live.on_event(ev)
    rebuilt = CaptionFeed()
    rebuilt.load(journal.session())
    for feed in (live, rebuilt):
        assert [(ln["text"], ln["lang"]) for ln in feed.snapshot()["lines"]] == [
            ("w0 w1", "es"), ("w2 w3", ""), ("w4", "")]
    journal.close()


def test_a_translation_goes_to_its_line_by_stream_and_start(script, tmp_path):
    """The app numbers its lines its own way: a translation goes to the line of its stream where
    its first word is, sent as an update of that line when it comes after it; the feed's lines
    are wider, so the translations of the app's lines within one are joined as they come; it is
    rebuilt from the journal."""
    from voxcap.framing import STEP_SECONDS

    journal = Journal.create({"model": "test"}, kind="test", root=tmp_path)
    live = CaptionFeed()
    viewer = live.add_viewer(lambda: None)
    publish = lambda ev: (journal.on_event(ev), live.on_event(ev))  # noqa: E731
    them = script(publish, session_id=journal.session_id)
    you = script(publish, label="You", stream_id="s2", session_id=journal.session_id)
    for s in (them, you):
        journal.stream_opened(s.stream_id, label=s.label, source="test")
    for _ in range(2):  # two lines each, at the same times
        them.say(4, pause_every=4)
        you.say(4, pause_every=4)
    viewer.take()
    second = 33 * STEP_SECONDS  # where each stream's second line starts (w4 after a pause)
    assert [ln["start"] for ln in live.snapshot()["lines"]] == [0.0, 0.0, second, second]
    for ev in (LineTranslated("s2", 0, "w4 w5", second, second + 0.24, "de", "en", "x4 x5"),
               LineTranslated("s2", 1, "w6 w7", second + 0.32, second + 0.56, "de", "en", "x6 x7")):
        publish(ev)
    updates = [json.loads(m) for m in viewer.take()]
    assert [(u["type"], u["stream"], u["text"], u["translation"], u["translated"]) for u in updates] == [
        ("line", "s2", "w4 w5 w6 w7", "x4 x5", False),  # the first half: not to its end yet
        ("line", "s2", "w4 w5 w6 w7", "x4 x5 x6 x7", False)]  # its end: the line is not final
    them.finish()
    you.finish()
    rebuilt = CaptionFeed()
    rebuilt.load(journal.session())
    for feed in (live, rebuilt):
        assert [(ln["stream"], ln["translation"], ln["target"], ln["translated"], ln["lang"])
                for ln in feed.snapshot()["lines"]] == [
            ("s1", "", "", False, ""), ("s2", "", "", False, ""),
            ("s1", "", "", False, ""), ("s2", "x4 x5 x6 x7", "en", True, "de")]
    journal.close()


def test_a_line_s_share_of_its_sentence_updates_the_page_not_obs(script, tmp_path):
    """A line's own translation, then its share of its sentence's (``refined``): the page's line
    is updated with the share (marked so), OBS, which showed the first, sends nothing again;
    rebuilt from the journal, the line has the share."""
    from voxcap.framing import STEP_SECONDS
    from voxcap.share.obs import TRANSLATION, CaptionPicker

    journal = Journal.create({"model": "test"}, kind="test", root=tmp_path)
    live = CaptionFeed()
    viewer = live.add_viewer(lambda: None)
    publish = lambda ev: (journal.on_event(ev), live.on_event(ev))  # noqa: E731
    them = script(publish, session_id=journal.session_id)
    journal.stream_opened(them.stream_id, label=them.label, source="test")
    them.say(4, pause_every=4)
    them.finish()
    picker = CaptionPicker(TRANSLATION)
    picker.latest(viewer.take())
    end = 4 * STEP_SECONDS
    publish(LineTranslated("s1", 0, "w0 w1 w2 w3", 0.0, end, "fr", "en", "x0 x1 x2"))
    first = viewer.take()
    assert picker.latest(first) == "x0 x1 x2"
    publish(LineTranslated("s1", 0, "w0 w1 w2 w3", 0.0, end, "fr", "en", "x0 x1 x2 x3", True))
    again = viewer.take()
    assert [(m["translation"], m.get("refined")) for m in map(json.loads, again)] == [
        ("x0 x1 x2 x3", True)]
    assert picker.latest(again) is None  # OBS leaves the line it showed as it was
    rebuilt = CaptionFeed()
    rebuilt.load(journal.session())
    for feed in (live, rebuilt):
        assert [ln["translation"] for ln in feed.snapshot()["lines"]] == ["x0 x1 x2 x3"]
    journal.close()


def test_a_line_already_in_the_target_language_keeps_its_words():
    """Part of a line not translated (already in the target language) is its original in the
    line's translation; a line with nothing translated has none (the page shows its original)."""
    from voxcap.share.feed import LineTranslation

    t = LineTranslation("en")
    t.parts[0.0] = (1.0, "hello there", False)
    assert t.text() == "" and t.covers(1.0)
    t.parts[1.2] = (2.0, "x2 x3", True)
    assert t.text() == "hello there x2 x3" and t.covers(2.0) and not t.covers(2.5)


def test_pausing_is_said_until_the_session_gets_there():
    """F6's "pausing" (``CaptioningAsked``, before the last words are flushed) is the state the
    pages are sent, then "paused"; a pause refused (an ``AppProblem``) gives the state back."""
    from voxcap.events import AppProblem, CaptioningAsked

    feed = CaptionFeed()
    feed.on_event(CaptioningState("on", "sess-1"))
    viewer = feed.add_viewer(lambda: None)
    viewer.take()
    for ev in (CaptioningAsked("pausing"), CaptioningState("paused", "sess-1"),
               CaptioningAsked("resuming"), CaptioningState("on", "sess-1"),
               CaptioningAsked("pausing"), AppProblem("A file cannot be paused.", "", "capture")):
        feed.on_event(ev)
    assert [json.loads(m)["state"] for m in viewer.take()] == [
        "pausing", "paused", "resuming", "on", "pausing", "on"]
    feed.on_event(CaptioningAsked("pausing"))
    assert feed.snapshot()["state"] == "pausing"  # a page that opens now says it too


def test_obs_gets_a_long_line_s_last_whole_words():
    """A line longer than OBS's two rows goes as its last CAPTION_CHARS characters, from a
    word's start: never the end of a cut word ("19 w1893" of "w1419 w1893")."""
    from voxcap.share.obs import CAPTION_CHARS, ORIGINAL, TRANSLATION, CaptionPicker

    words = " ".join(f"w{1000 + i}" for i in range(40))  # 5 characters and a space each
    line = {"type": "line", "id": 1, "text": words, "added": " w1039", "new": False}
    sent = CaptionPicker(ORIGINAL).latest([json.dumps(line)])
    assert sent is not None and words.endswith(sent) and len(sent) <= CAPTION_CHARS
    assert sent.split()[0] in words.split(), sent
    assert len(sent) > CAPTION_CHARS - 6  # only the cut word is left out
    translated = dict(line, target="en", translation=words.replace("w", "x"))
    sent = CaptionPicker(TRANSLATION).latest([json.dumps(translated)])
    assert sent is not None and sent.split()[0] in translated["translation"].split(), sent
    one_word = dict(line, text="x" * 100)  # no space to cut at (a long word, or no spaces)
    assert CaptionPicker(ORIGINAL).latest([json.dumps(one_word)]) == "x" * CAPTION_CHARS
