"""The history in the order things were said, not the order their captions arrived: with one
stream lagging (a loaded machine, a slow server), "Them 20:42:32" came after "You 20:42:43"."""

from __future__ import annotations

import time

from voxcap.captions.assembly import CaptionLine, CaptionUpdate
from voxcap.gui.main.history import HistoryView

BASE = time.mktime((2026, 12, 4, 20, 42, 0, 0, 0, -1))


def _line(line_id: int, stream: str, label: str, text: str, start_s: float,
          paragraph_start: bool = True) -> CaptionLine:
    return CaptionLine(line_id, stream, label, text, start_s, start_s + 1.0, paragraph_start)


def _new(line: CaptionLine) -> list[CaptionUpdate]:
    return [CaptionUpdate(line, True, line.text)]


def test_a_lagging_streams_lines_go_in_by_the_time_they_were_heard(qtbot):
    view = HistoryView()
    qtbot.addWidget(view)
    view.show_labels = True
    view.time_of = lambda line: BASE + line.start_s  # heard at
    view.note_source("Them", "the call")
    view.apply(_new(_line(1, "you", "You", "I see.", 30.0)))
    view.apply(_new(_line(2, "you", "You", "Go on.", 43.0)))
    late = _line(3, "them", "Them", "The figures are in.", 32.0)  # its captions came late
    view.apply(_new(late))
    view.apply([CaptionUpdate(late, False, " All of them.")])  # ...and grow where they are
    view.apply(_new(_line(4, "them", "Them", "Next week, then.", 35.0, paragraph_start=False)))
    view.apply(_new(_line(5, "you", "You", "Fine.", 50.0)))

    lines = view.toPlainText().splitlines()
    assert lines[1:] == ["[20:42:30] You: I see.",
                         "[20:42:32] Them: The figures are in. All of them. Next week, then.",
                         "[20:42:43] You: Go on.",
                         "[20:42:50] You: Fine."], lines


def test_a_late_first_paragraph_goes_to_the_top_and_both_still_grow(qtbot):
    view = HistoryView()
    qtbot.addWidget(view)
    view.show_labels = True
    view.time_of = lambda line: BASE + line.start_s
    you = _line(1, "you", "You", "Hello?", 43.0)
    them = _line(2, "them", "Them", "Can you hear me?", 32.0)
    view.apply(_new(you))
    view.apply(_new(them))  # before the only paragraph there is
    view.apply([CaptionUpdate(you, False, " Yes.")])
    view.apply([CaptionUpdate(them, False, " Good.")])
    assert view.toPlainText().splitlines() == ["[20:42:32] Them: Can you hear me? Good.",
                                               "[20:42:43] You: Hello? Yes."]
