"""Through the tiny vLLM model: engine -> journal (on the engine thread, as live does) and
live lines -> SRT/VTT whose cue times match the audio."""

import itertools
from datetime import timedelta

import pytest
import srt
import webvtt
from support.engine_helpers import collect_stream

from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.export import export
from voxcap.captions.journal import Journal, engine_session_settings
from voxcap.captions.sessions import SessionStore
from voxcap.captions.words import words_from_deltas
from voxcap.commands.bench import speech_like

pytestmark = [pytest.mark.engine, pytest.mark.slow]

SECONDS = 6.0


def _td(stamp: str) -> timedelta:
    h, m, s = stamp.split(":")
    return timedelta(hours=int(h), minutes=int(m), seconds=float(s))


def test_tiny_model_to_srt_and_vtt(engine, engine_hub, engine_events, tmp_path):
    audio = speech_like(SECONDS, seed=11)
    journal = Journal.create(engine_session_settings(engine.settings, engine.ready_info),
                             kind="test", root=tmp_path / "sessions")
    engine_hub.subscribe(journal.on_event)
    try:
        sid = engine.open_stream("You")
        journal.stream_opened(sid, label="You", source="speech_like(11)")
        for i in range(0, audio.size, 1280):
            engine.push_audio(sid, audio[i:i + 1280])
        engine.close_stream(sid)
        deltas, finished = collect_stream(engine_events, sid)
    finally:
        engine_hub.unsubscribe(journal.on_event)
        journal.close()
    assert finished.reason == "flushed" and finished.audio_seconds == pytest.approx(SECONDS)

    asm = CaptionAssembler(width=42)
    for ev in [*deltas, finished]:
        asm.on_event(ev)
    words = [w.text for w in words_from_deltas(deltas)]
    assert words, "the tiny model produced no text"
    assert " ".join(line.text for line in asm.history).split() == words

    session = SessionStore(tmp_path / "sessions").open("last")
    assert session.warnings == []
    assert len(session.records) == len(deltas)
    assert session.audio_seconds == pytest.approx(SECONDS)
    assert session.info.settings["resolved_graph_mode"] == engine.ready_info.resolved_graph_mode
    assert session.records[-1].audio_end_s == pytest.approx(SECONDS)

    export(session, tmp_path / "out.srt")
    export(session, tmp_path / "out.vtt")
    subs = list(srt.parse((tmp_path / "out.srt").read_text(encoding="utf-8"), ignore_errors=False))
    caps = webvtt.read(str(tmp_path / "out.vtt")).captions
    assert len(subs) == len(caps) > 0
    for spans, texts in ([(s.start, s.end) for s in subs], [s.content for s in subs]), \
            ([(_td(c.start), _td(c.end)) for c in caps], [c.text for c in caps]):
        assert " ".join(texts).split() == words
        for (start, end), text in zip(spans, texts, strict=False):
            assert timedelta(0) <= start < end <= timedelta(seconds=SECONDS)
            assert end - start <= timedelta(seconds=7)
            assert all(len(line) <= 42 for line in text.split("\n")) and text.count("\n") <= 1
        for (_, e0), (s1, _) in itertools.pairwise(spans):
            assert e0 <= s1
    first_word = words_from_deltas(deltas)[0]
    last_word = words_from_deltas(deltas)[-1]
    assert subs[0].start <= timedelta(seconds=first_word.start_s)
    assert timedelta(seconds=last_word.end_s) <= subs[-1].end + timedelta(milliseconds=1)
