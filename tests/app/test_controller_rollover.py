"""Rollovers under the real controller and the real engine (the session's tiny vLLM engine on
the CPU build, lent through BorrowedEngine): each engine-session switch is a SessionRolled
event, a rollover record in the session's journal and a count in the meter, as README says."""

from __future__ import annotations

import soundfile as sf
from support.borrowed_engine import BorrowedEngine
from support.event_wait import Events
from support.event_wait import wait_for as _wait

from voxcap.app.controller import SessionController
from voxcap.app.lag import RecentValues
from voxcap.app.meter import MeterSampler
from voxcap.app.sources import FileAudio
from voxcap.captions.sessions import SessionStore
from voxcap.commands.bench import speech_like
from voxcap.engine.rollover import RollingEngine, RolloverPolicy
from voxcap.events import CaptioningState, SessionRolled


def test_every_rollover_is_journalled_and_counted(engine, engine_hub, tmp_path):
    wav = tmp_path / "call.wav"
    sf.write(wav, speech_like(8.0, seed=7), 16000)
    policy = RolloverPolicy(soft_s=1.0, hard_s=2.0)  # a switch every ~2 s of audio

    def factory(settings, sink):
        return RollingEngine(lambda inner_sink: BorrowedEngine(engine, engine_hub, inner_sink),
                             policy=policy, on_event=sink)

    q = Events()
    ctl = SessionController(q.put, engine_factory=factory, audio=FileAudio(wav),
                            journal_root=tmp_path / "sessions")
    ctl.start_engine(engine.settings)
    ctl.start_captioning("")
    off, seen = _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "off",
                      timeout=180)
    rolled = [e for e in seen if isinstance(e, SessionRolled)]
    assert len(rolled) >= 3, rolled
    session = SessionStore(tmp_path / "sessions").open(off.session_id)
    assert [(r.engine_session, r.at_audio_s) for r in session.rollovers] == \
        [(e.session, round(e.at_audio_s, 3)) for e in rolled]
    reading = MeterSampler(ctl, RecentValues(), RecentValues(), read_gpu=lambda: None).sample()
    assert ctl.rollovers == len(rolled) and reading.rollovers == len(rolled)
    assert ctl.shutdown().wait(30)
