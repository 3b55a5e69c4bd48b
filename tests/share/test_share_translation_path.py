"""Translated captions to the caption page for real: deltas of two speakers -> the app's line
worker with the tiny CTranslate2 model (``app.line_translation``, the overlay's 42 columns) ->
``LineTranslated`` -> the share server's feed (160 columns: several of the app's lines in one) ->
the page in a real browser, each translation under the line it translates; with translation
switched off, none."""

from __future__ import annotations

import pytest
from support.browser import wait_for
from support.caption_helpers import deltas_from_pieces, speech
from support.tiny_translation import copy_package, make_package

from voxcap.app.line_translation import LineTranslation
from voxcap.eventhub import EventHub
from voxcap.events import CaptioningState, LineTranslated, StreamFinished, StreamOpened

pytestmark = pytest.mark.timeout(300)
SAID = {  # two speakers at once, three app lines each, in one feed line
    "s1": ["Je pense que nous devrions partir bientôt.", "Le train arrive avec du retard ce soir.",
           "Merci beaucoup pour votre aide précieuse."],
    "s2": ["Nous avons encore le temps de manger.", "La gare est juste à côté du marché.",
           "Je vous attends devant la porte."],
}
LINES = ("return [...document.querySelectorAll('#captions .line')].map(e => [[...e.childNodes]"
         ".find(n => n.nodeType === 3).textContent, [...e.querySelectorAll('.tr')]"
         ".map(t => t.textContent).join('|')])")  # its words (after the label), its translation


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    built = make_package(tmp_path_factory.mktemp("tiny-mt") / "fr_en", "fr", "en")
    root = tmp_path_factory.mktemp("models")
    copy_package(built, root / "fr_en", "fr", "en")
    return root


def _session(hub: EventHub) -> None:
    hub.publish(CaptioningState("starting", "sess-1", ("Them", "You")))
    for sid, label in (("s1", "Them"), ("s2", "You")):
        hub.publish(StreamOpened(sid, label, "test"))
    hub.publish(CaptioningState("on", "sess-1", ("Them", "You")))
    streams = {sid: deltas_from_pieces([p for text in lines for p in speech(text.split())], sid)
               for sid, lines in SAID.items()}
    for them, you in zip(*streams.values(), strict=True):  # interleaved, as two streams run
        hub.publish(them)
        hub.publish(you)
    for sid, deltas in streams.items():
        hub.publish(StreamFinished(sid, "flushed", len(deltas), len(deltas) * 0.08))


@pytest.mark.parametrize("target", ["en", ""])
def test_each_translation_under_the_line_it_translates(browser, make_server, models, target):
    hub = EventHub()
    server = make_server(style={"translation": "both", "lines": 0})
    hub.subscribe(server.post)
    seen: list[LineTranslated] = []
    lines = LineTranslation(lambda ev: (seen.append(ev), hub.publish(ev)), target=target,
                            models_dir=models, queue_lines=100)
    hub.subscribe(lines.on_event)
    browser.get(server.url + "?lines=0")
    browser.execute_script("localStorage.clear()")
    _session(hub)
    lines.close(drain_s=60)
    assert len(seen) == 6  # the app's lines: three a speaker
    if not target:
        wait_for(lambda: [tr for _text, tr in browser.execute_script(LINES)] == ["", ""],
                 what="two lines, no translation")
        return
    by_stream = {sid: " ".join(e.translation for e in seen if e.stream_id == sid) for sid in SAID}
    assert all(e.translation and e.target == "en" for e in seen)
    expected = [[" ".join(SAID[sid]), by_stream[sid]] for sid in SAID]
    wait_for(lambda: sorted(browser.execute_script(LINES)) == sorted(expected),
             what="each speaker's line with its own translations, in order")
    assert browser.execute_script("return [...document.querySelectorAll('.tr')].map(t => t.lang)"
                                  ) == ["en", "en"]
