"""A capture's end and its losses said in plain words, not its counters ("3 blocks dropped,
0 overflows…", "input overflows", "the consumer is too slow")."""

from __future__ import annotations

from types import SimpleNamespace

from voxcap.capture.capture import loss_words, stopped_words


def _stats(dropped=0, overflows=0, gap=0.0, interruptions=0):
    return SimpleNamespace(seconds_delivered=12.0, dropped_blocks=dropped, overflows=overflows,
                           gap_seconds=gap, interruptions=interruptions)


def test_nothing_lost_is_said_so_and_losses_in_plain_words():
    assert stopped_words("You", _stats()) == "You: stopped after 12.0 s of audio, none lost"
    said = stopped_words("Them", _stats(dropped=3, gap=0.06, interruptions=1))
    assert said == ("Them: stopped after 12.0 s of audio (0.06 s of sound lost, the sound was cut "
                    "off once)")
    for jargon in ("blocks", "overflows", "interruptions", "gaps"):
        assert jargon not in said


def test_losses_while_capturing_in_plain_words():
    said = [loss_words("Them", "queue full", 0.24, 0.5, 3), loss_words("Them", "overflow", 0, 0, 2),
            loss_words("You", "gap", 0.3, 1.2, 0)]
    assert said == ["Them: 0.24 s of sound lost: voxcap fell behind reading it (0.50 s so far)",
                    "Them: the sound system lost some sound (2 times so far)",
                    "You: 0.30 s of sound never arrived (1.20 s so far)"]
    for jargon in ("blocks", "overflow", "consumer", "input"):
        assert not [s for s in said if jargon in s], jargon
