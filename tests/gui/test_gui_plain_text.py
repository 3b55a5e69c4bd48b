"""Text that comes from outside voxcap is shown as it is, never as rich text: a program on OBS's
port answering with markup (a heading, an image from the local disk, a link) reaches the share
panel's OBS line as those characters, and so does a server's error text in the main window's
notice. The real app, its Settings dialog and an obs-websocket impostor on loopback."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from support.fake_obs import ObsImpostor

from voxcap.app.settings import AppSettings, ShareSettings
from voxcap.engine.choice import EngineChoice

MARKUP = '<h1>Heading</h1><img src="file:///usr/share/pixmaps/debian-logo.png"><a href="x">link</a>'


def test_markup_from_obs_and_servers_is_shown_as_text(qtbot, make_app, fake_audio, tmp_path,
                                                      monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    with ObsImpostor(comment=MARKUP) as fake:
        app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"),
                                   share=ShareSettings(obs=True, obs_url=fake.url)))
        qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10_000)
        app.toggle_captioning()
        qtbot.waitUntil(lambda: app.state == "on", timeout=10_000)
        fake_audio.feed("Them", 1.0)
        app.window.act_settings.trigger()
        panel = app.settings_control.dialog.share

        def shown():
            app.tick()
            return MARKUP in panel.obs_status.text()
        qtbot.waitUntil(shown, timeout=20_000)
        assert fake.captions  # it was sent captions (no password set: anything on the port is)
        app.window.show_notice(f"The server said: {MARKUP}", "check the server")
        labels = [panel.obs_status, app.window.notice]
        for label in labels:
            assert label.textFormat() == Qt.TextFormat.PlainText, label.accessibleDescription()
            assert MARKUP in label.text()
        # every status line of the window and the dialog (a11y.status_label's: named by their
        # text, described by what they are): plain text, whatever they will show
        labels = app.window.findChildren(QLabel) + app.settings_control.dialog.findChildren(QLabel)
        status = [w for w in labels if w.accessibleDescription() and not w.accessibleName()]
        assert len(status) >= 8
        assert [w.accessibleDescription() for w in status
                if w.textFormat() != Qt.TextFormat.PlainText] == []
