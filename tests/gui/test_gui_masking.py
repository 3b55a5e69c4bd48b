"""Settings → "Mask profanity" reaches every place the app's captions go: the overlay, the
history, the exports written on disk (SRT, VTT, TXT), the caption page's feed over loopback,
Previous sessions and the day's search; the journal keeps the words said."""

from __future__ import annotations

import json
import socket
import urllib.request

from support.gui_fakes import scripted_factory

from voxcap.app.settings import AppSettings, ShareSettings
from voxcap.captions.sessions import SessionStore
from voxcap.engine.choice import EngineChoice

SAID = ("oh", "shit", "that", "is", "fucking", "good.")
MASKED, REAL = ("s***", "f******"), ("shit", "fucking")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _masked(text: str, where: str) -> None:
    assert all(m in text for m in MASKED), (where, text)
    assert not any(r in text.lower() for r in REAL), (where, text)


def _get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return r.read().decode()


def _feed_until(port: int, word: str) -> str:
    """The caption page's event feed (server-sent events) until ``word`` is in it."""
    seen = []
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30) as feed:
        for raw in feed:
            line = raw.decode()
            if line.startswith("data:"):
                seen.append(json.dumps(json.loads(line[5:])))
                if word in seen[-1]:
                    return "\n".join(seen)
    return "\n".join(seen)


def test_masking_reaches_every_output_and_the_journal_keeps_the_words(
        qtbot, make_app, fake_audio, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    port = _free_port()
    settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"), mask_profanity=True,
                           share=ShareSettings(enabled=True, port=port))
    app = make_app(settings, engine_factory=scripted_factory(script=SAID))
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10_000)
    qtbot.waitUntil(lambda: (app.tick(), app.sharing.service.status().running)[1], timeout=15_000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=10_000)
    fake_audio.feed("Them", 1.2)  # 15 steps: every word said once, the last one twice
    qtbot.waitUntil(lambda: "good." in app.window.history.toPlainText(), timeout=10_000)
    _masked(app.window.history.toPlainText(), "history")
    _masked(" ".join(app.overlay.visible_text()), "overlay")
    _masked(_feed_until(port, "good."), "caption page feed")
    qtbot.waitUntil(lambda: "good." in _get(port, "/captions.txt"), timeout=10_000)
    for path in ("/captions.txt", "/captions.vtt"):
        _masked(_get(port, path), path)

    session = app.exports.current_session()
    for suffix in (".srt", ".vtt", ".txt"):
        out = app.exports.export_session(session, str(tmp_path / f"talk{suffix}"))
        assert out is not None, app.window.notice.text()
        _masked((tmp_path / f"talk{suffix}").read_text(encoding="utf-8"), suffix)

    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "off", timeout=10_000)
    sid = session.session_id
    journal = SessionStore(tmp_path / "sessions").open(sid)
    said = "".join(r.text for r in journal.records)
    assert "shit" in said and "fucking" in said  # the journal keeps the words

    app.window.show_session(sid)
    qtbot.waitUntil(lambda: "good." in app.window.sessions.text.toPlainText(), timeout=5000)
    _masked(app.window.sessions.text.toPlainText(), "previous sessions")

    search = app.window.day_search
    search.current_session = lambda: ""  # the session just captioned counts as an earlier one
    search.search("that is")
    qtbot.waitUntil(lambda: search.hits.count() > 0, timeout=10_000)
    _masked(" ".join(search.hits.item(i).text() for i in range(search.hits.count())), "search")
