"""The word list in the session controller: the one place every front end's text comes from
(overlay, history, feed, OBS, the terminal, the journal), so all of them get the names right."""

from __future__ import annotations

from support import gui_fakes
from support.event_wait import Events
from support.event_wait import wait_for as _wait
from support.gui_fakes import FakeAudio, scripted_factory

from voxcap.app.controller import SessionController
from voxcap.captions.export import render
from voxcap.captions.glossary import Glossary
from voxcap.captions.sessions import SessionStore
from voxcap.engine.settings import InProcessSettings
from voxcap.events import CaptioningState, EngineReady, TextDelta

SAID = ("Thanks", "Wen", "Yi.", "The", "Kubernetis", "cluster", "is", "up,", "says", "Okonquo.")


def test_the_published_text_and_the_journal_have_the_names_and_the_journal_keeps_both(
        tmp_path, monkeypatch):
    monkeypatch.setattr(gui_fakes, "SCRIPT", SAID)  # the scripted engine's words
    q = Events()
    audio = FakeAudio()
    ctl = SessionController(q.put, engine_factory=scripted_factory(), audio=audio,
                            journal_root=tmp_path)
    ctl.set_glossary(Glossary(["Wenyi", "Kubernetes", "Okonkwo"]))
    ctl.start_engine(InProcessSettings("/tmp/model", max_streams=2))
    _wait(q, lambda e: isinstance(e, EngineReady))
    ctl.start_captioning("system")
    _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "on")
    audio.feed("Them", 0.08 * 2 * len(SAID))  # one word every second step
    ctl.stop_captioning()
    _wait(q, lambda e: isinstance(e, CaptioningState) and e.state == "off")
    assert ctl.shutdown().wait(10)

    published = [e for e in q.all if isinstance(e, TextDelta)]
    shown = "Thanks Wenyi. The Kubernetes cluster is up, says Okonkwo."
    assert "".join(d.text for d in published).strip().startswith(shown)
    assert [d.index for d in published] == sorted(d.index for d in published)
    session = SessionStore(tmp_path).open(ctl.session_id)
    assert "".join(r.text for r in session.records).strip().startswith(shown)
    said = "".join(r.said if r.said is not None else r.text for r in session.records).strip()
    assert said.startswith(" ".join(SAID))
    assert "Kubernetes" in render(session, "vtt")[0]
