"""Enter on a match of the day's search opens its session at the match (scrolled to, selected,
highlighted), the n-th match at the n-th place its words are said; translations are found and
say so; every match is counted, none capped at 1,000."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from support.caption_helpers import deltas_from_pieces, speech
from support.overlay_client import keep

from voxcap.captions.journal import Journal
from voxcap.events import LineTranslated, StreamFinished


def _session(root, session_id, sentences, translations=()):
    """A finished session of "Them" saying ``sentences`` (one line each, a pause between),
    with each line's translation when given."""
    journal = Journal.create(root=root, session_id=session_id)
    journal.stream_opened("s1", label="Them")
    pieces: list[str] = []
    spans = []
    for words in sentences:
        spans.append((len(pieces), len(pieces) + len(words)))
        pieces += speech(words, gap_steps=40)
    for d in deltas_from_pieces(pieces, "s1"):
        journal.append(d)
    for n, (words, (a, b), text) in enumerate(zip(sentences, spans, translations, strict=False)):
        journal.on_event(LineTranslated("s1", n + 1, " ".join(words), a * 0.08, b * 0.08, "fr",
                                        "en", text))
    journal.stream_finished(StreamFinished("s1", "flushed", len(pieces), len(pieces) * 0.08))
    journal.close()


def _find(qtbot, w, query):
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    QTest.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    w.search.edit.clear()
    QTest.keyClicks(w.search.edit, query)
    QTest.keyClick(w.search.edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: w.day_search.result.text().startswith(f"“{query}” in"), timeout=5000)


def _open(w, row):
    w.day_search.hits.setFocus()
    w.day_search.hits.setCurrentRow(row)
    QTest.keyClick(w.day_search.hits, Qt.Key.Key_Return)


def _shown_selection(w) -> tuple[str, int]:
    """The transcript's selected text, and where it starts; asserts it is on screen."""
    text = w.sessions.text
    cursor = text.textCursor()
    QApplication.processEvents()
    assert text.viewport().rect().contains(text.cursorRect()), "the match is not scrolled to"
    assert [s.cursor.selectedText() for s in text.extraSelections()] == [cursor.selectedText()]
    return cursor.selectedText(), cursor.selectionStart()


def test_enter_opens_an_earlier_session_at_the_match(qtbot, make_app, tmp_path):
    filler = [f"Item number {n} of the agenda was read out.".split() for n in range(60)]
    said = [*filler[:30], "The budget is late again.".split(), *filler[30:],
            "We close the budget today.".split()]
    _session(tmp_path / "sessions", "morning", said)
    app = make_app()
    w = app.window
    _find(qtbot, w, "BUDGET")
    assert w.day_search.hits.count() == 2
    _open(w, 1)
    assert w.tabs.currentIndex() == 1 and w.sessions.session.session_id == "morning"
    assert QApplication.focusWidget() is w.sessions.text
    qtbot.waitUntil(lambda: w.sessions.text.verticalScrollBar().value() > 0)  # not at the top
    second, second_at = _shown_selection(w)
    transcript = w.sessions.text.toPlainText()
    assert second == "budget" and transcript.rfind("budget") == second_at  # the second place
    w.grab().save(str(tmp_path / "match.png"))
    keep(tmp_path / "match.png", "day-search-match-opened.png")

    w.tabs.setCurrentIndex(0)
    _open(w, 0)
    first, first_at = _shown_selection(w)
    assert first == "budget" and transcript.find("budget") == first_at


def test_a_translation_is_found_says_so_and_opens_at_it(qtbot, make_app, tmp_path):
    _session(tmp_path / "sessions", "call",
             ["Bonjour à tous.".split(), "Le budget est prêt pour jeudi.".split()],
             ["Hello everyone.", "The budget is ready for Thursday."])
    app = make_app()
    w = app.window
    _find(qtbot, w, "thursday")
    row = w.day_search.hits.item(0).text()
    assert "Them, in English (translation): The budget is ready for Thursday." in row, row
    assert "1 match (1 in translations) in 1 session" in w.day_search.result.text()
    _open(w, 0)
    selected, at = _shown_selection(w)
    transcript = w.sessions.text.toPlainText()
    assert selected == "Thursday" and transcript.find("Thursday") == at
    assert "Le budget est prêt pour jeudi." in transcript  # the original above it
    w.grab().save(str(tmp_path / "translation.png"))
    keep(tmp_path / "translation.png", "day-search-translation-opened.png")

    w.tabs.setCurrentIndex(0)
    _find(qtbot, w, "budget")  # in the words as heard and in the translation
    rows = [w.day_search.hits.item(i).text() for i in range(w.day_search.hits.count())]
    assert len(rows) == 2 and sum("(translation)" in r for r in rows) == 1
    assert "2 matches (1 in translations)" in w.day_search.result.text()
    w.grab().save(str(tmp_path / "hits.png"))
    keep(tmp_path / "hits.png", "day-search-translation-hits.png")


def test_every_match_is_counted_not_capped_at_1000(qtbot, make_app, tmp_path):
    _session(tmp_path / "sessions", "long", [["again", "and"] * 1100])
    app = make_app()
    w = app.window
    _find(qtbot, w, "again")
    said = w.day_search.result.text()
    assert "1,100 matches in 1 session, the first 200 listed" in said, said
    assert w.day_search.hits.count() == 200
    w.grab().save(str(tmp_path / "count.png"))
    keep(tmp_path / "count.png", "day-search-all-counted.png")
