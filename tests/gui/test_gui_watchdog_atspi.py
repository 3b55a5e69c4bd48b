"""What a screen reader hears of the caption watchdog: the real app (scripted engine, fake audio)
under Xvfb, read over AT-SPI from another process. "Speech, but no captions" is heard once, at
once (assertive), though both the notice and the overlay's state band show it; the fresh session
and the captions' return are heard politely; the band and the notice keep the words to read."""

from __future__ import annotations

import pytest
from support.atspi import overlay_node, pyatspi_available, until, walk
from support.atspi_session import atspi_app_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]


def _heard(listener, words: str, settle_s: float = 3.0) -> list[dict]:
    """Every announcement containing ``words``: the first awaited, then ``settle_s`` more of
    the app's events read (a second one would come within it)."""
    said = lambda ev: ev["type"] == "object:announcement" and words in ev["data"]  # noqa: E731
    assert listener.wait_for(said, 20), listener.events
    listener.wait_for(lambda ev: False, settle_s)
    return [ev for ev in listener.events if said(ev)]


def test_no_captions_is_heard_once(tmp_path):
    with atspi_app_ready(tmp_path) as (_x, bus, listener, app):
        app.send("caption")
        until(lambda: bus.dump(app.pid), lambda t: "hello" in overlay_node(t)["description"])
        app.send("watch missing")
        heard = _heard(listener, "no captions for 8 s")
        assert len(heard) == 1, heard
        assert heard[0]["detail1"] == 2, heard  # assertive: a reader hears it now
        tree = bus.dump(app.pid)
        assert "no captions for 8 s" in overlay_node(tree)["description"]  # the band, to read
        assert any("no captions for 8 s" in n.get("name", "") for n in walk(tree)
                   if n.get("role") == "label")  # the notice, to read

        app.send("watch fresh_session")
        fresh = _heard(listener, "starting a fresh caption session")
        assert len(fresh) == 1 and fresh[0]["detail1"] == 1, fresh  # polite
        app.send("watch back")
        back = _heard(listener, "captions are back")
        assert len(back) == 1, back
        assert len(_heard(listener, "no captions for 8 s", settle_s=1.0)) == 1  # not said again

        app.send("hide")  # the window in the tray, the overlay alone on screen: heard the same
        app.send("watch missing")
        listener.wait_for(lambda ev: False, 5.0)
        assert len(_heard(listener, "no captions for 8 s", settle_s=0)) == 2, "window hidden"
