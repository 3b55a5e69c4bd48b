"""The whole path with the real engine (the session's tiny vLLM model, dummy weights): audio ->
engine -> session controller -> its events -> the caption server -> the page in chromium,
which shows the engine's words in the order they came, and the transcript the same words."""

from __future__ import annotations

import queue
import urllib.request

import pytest
from support.borrowed_engine import borrowed_factory
from support.browser import caption_text, wait_for
from support.gui_fakes import FakeAudio

from voxcap.app.controller import SessionController
from voxcap.captions.words import words_from_deltas
from voxcap.commands.bench import speech_like
from voxcap.eventhub import EventHub
from voxcap.events import CaptioningState, TextDelta
from voxcap.share import ShareOptions, Sharing

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_engines_words_in_the_browser(engine, engine_hub, browser, tmp_path):
    hub = EventHub()
    events = hub.subscribe()
    audio = FakeAudio()
    ctl = SessionController(hub.publish, engine_factory=borrowed_factory(engine, engine_hub),
                            audio=audio, journal_root=tmp_path / "sessions")
    sharing = Sharing(hub, session_source=ctl.journal_session)
    try:
        status = sharing.apply_now(ShareOptions(enabled=True, port=0))
        ctl.start_engine(engine.settings)
        ctl.start_captioning("system")
        browser.get(status.url)
        wait_for(lambda: ctl.state == "on", timeout=120, what="captioning on")
        audio.captures["Them"].feed_samples(speech_like(4.0, seed=5))
        deltas = []

        def engine_text():
            while True:
                try:
                    ev = events.get_nowait()
                except queue.Empty:
                    return None
                if isinstance(ev, TextDelta):
                    deltas.append(ev)
                elif isinstance(ev, CaptioningState) and ev.state == "off":
                    return True
        ctl.stop_captioning()  # flush: the engine's last words, then off
        wait_for(engine_text, timeout=300, what="the stream's flush")
        words = [w.text for w in words_from_deltas(deltas)]
        assert len(words) >= 5, "the tiny model produced no text"
        wait_for(lambda: caption_text(browser).split() == words, what="the engine's words")
        port = sharing.status().url.rsplit(":", 1)[1].strip("/")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/captions.txt", timeout=30) as r:
            assert r.read().decode().split() == words
    finally:
        sharing.stop()
        ctl.shutdown().wait(60)
