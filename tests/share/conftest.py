"""Fixtures of the share tests: one headless chromium for the module's tests, servers that are
always stopped, and a scripted caption session fed as the controller's events."""

from __future__ import annotations

import pytest
from support import browser as chromium
from support.caption_script import Script

from voxcap.captions.journal import Journal
from voxcap.eventhub import EventHub
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
