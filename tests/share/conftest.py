"""Fixtures of the share tests: one headless chromium for the module's tests, servers that are
always stopped, and a scripted caption session fed as the controller's events."""

from __future__ import annotations

import time

import pytest
from support import browser as chromium

from voxcap.captions.journal import Journal
from voxcap.eventhub import EventHub
from voxcap.events import CaptioningState, StreamFinished, StreamOpened, TextDelta
from voxcap.share.server import ShareServer


@pytest.fixture(scope="module")
def browser():
    if not chromium.available():
        pytest.skip("needs Debian's chromium and chromium-driver (scripts/setup-dev.sh)")
    driver = chromium.start_chromium()
    yield driver
    chromium.quit_chromium(driver)


@pytest.fixture
def make_server():
    servers = []

    def make(**kw) -> ShareServer:
        kw.setdefault("port", 0)
        server = ShareServer(**kw).start()
        servers.append(server)
        return server
    yield make
    for s in servers:
        s.stop()


class Script:
    """A caption session as the controller publishes it: words ``w0 w1 ...`` of one stream,
    one 80 ms step each, every word followed by an empty step (which completes it)."""

    def __init__(self, publish, label: str = "Them", stream_id: str = "s1",
                 session_id: str = "sess-1") -> None:
        self.publish, self.stream_id, self.label = publish, stream_id, label
        self.index = 0
        self.words: list[str] = []
        publish(CaptioningState("starting", session_id, (label,)))
        publish(StreamOpened(stream_id, label, "test source"))
        publish(CaptioningState("on", session_id, (label,)))

    def delta(self, text: str) -> TextDelta:
        i = self.index
        self.index += 1
        ev = TextDelta(self.stream_id, text, (), i, i * 0.08, (i + 1) * 0.08, time.time())
        self.publish(ev)
        return ev

    def say(self, n: int, pause_every: int = 0) -> list[str]:
        new = []
        for _ in range(n):
            word = f"w{len(self.words)}"
            self.words.append(word)
            new.append(word)
            self.delta(" " + word)
            self.delta("")
            if pause_every and len(self.words) % pause_every == 0:
                for _ in range(25):  # 2 s without text: a new line
                    self.delta("")
        return new

    def finish(self) -> None:
        self.publish(StreamFinished(self.stream_id, "flushed", self.index, self.index * 0.08))


@pytest.fixture
def script():
    return Script


class Journalled:
    """A scripted session published on ``hub`` and journalled as the controller does (the
    journal subscribed first); ``script`` says the words, ``journal.session`` reads it back."""

    def __init__(self, root) -> None:
        self.hub = EventHub()
        self.journal = Journal.create({"model": "test"}, kind="test", root=root)
        self.hub.subscribe(self.journal.on_event)
        self.script = Script(self.hub.publish, session_id=self.journal.session_id)
        self.journal.stream_opened(self.script.stream_id, label=self.script.label, source="test")


@pytest.fixture
def journalled(tmp_path):
    j = Journalled(tmp_path / "sessions")
    yield j
    j.journal.close()
