"""A capture's end said in plain words, not its counters ("3 blocks dropped, 0 overflows…")."""

from __future__ import annotations

from types import SimpleNamespace

from voxcap.capture.capture import stopped_words


def _stats(dropped=0, overflows=0, gap=0.0, interruptions=0):
    return SimpleNamespace(seconds_delivered=12.0, dropped_blocks=dropped, overflows=overflows,
                           gap_seconds=gap, interruptions=interruptions)


def test_nothing_lost_is_said_so_and_losses_in_plain_words():
    assert stopped_words("You", _stats()) == "You: stopped after 12.0 s of audio, none lost"
    said = stopped_words("Them", _stats(dropped=3, gap=0.06, interruptions=1))
    assert said == "Them: stopped after 12.0 s of audio (0.06 s of sound lost, the sound was cut off once)"
    for jargon in ("blocks", "overflows", "interruptions", "gaps"):
        assert jargon not in said
