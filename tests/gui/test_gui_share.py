"""Settings → Share captions: on, the address and the viewer count from the running server,
captions of the (scripted) engine in the feed, the local network with its token and QR code,
off at once, and a busy port as one line with its fix."""

from __future__ import annotations

import socket
import stat
import urllib.error
import urllib.request

from PySide6.QtGui import QGuiApplication, QImage

from voxcap.app.settings import AppSettings, load_settings, settings_path
from voxcap.app.window_state import load_window_state, state_path
from voxcap.engine.choice import EngineChoice
from voxcap.share.qr import qr_png


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(app, qtbot, panel, text: str) -> None:
    def shown():
        app.tick()
        return text in panel.viewers.text()
    qtbot.waitUntil(shown, timeout=15_000)


def test_share_captions_section(qtbot, make_app, fake_audio, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    app.sharing.service.server_kw["bind"] = "127.0.0.1"  # LAN rules below, on loopback only
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10_000)
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    panel = dlg.share
    dlg.tabs.setCurrentIndex(1)  # the "Share captions" tab
    assert dlg.tabs.tabText(1) == "Share captions" and panel.isVisible()
    assert not panel.enabled.isChecked() and panel.viewers.text() == "Not sharing."
    assert not app.sharing.service.status().running  # off by default

    port = _free_port()
    panel.enabled.setChecked(True)
    panel.port.setValue(port)
    dlg.apply()
    _status(app, qtbot, panel, "Sharing: 0 viewers connected (this computer only)")
    assert panel.url.text() == f"http://127.0.0.1:{port}/" and not panel.qr.isVisible()
    # what a screen reader reads is the address itself, not only what the label is for
    from PySide6.QtGui import QAccessible

    a11y = QAccessible.queryAccessibleInterface(panel.url)
    assert a11y.text(QAccessible.Text.Name) == panel.url.text()
    assert a11y.text(QAccessible.Text.Description) == "Share address"
    feed = urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30)
    _status(app, qtbot, panel, "Sharing: 1 viewer connected")

    app.toggle_captioning()  # the scripted engine's words reach the feed through the controller
    qtbot.waitUntil(lambda: app.state == "on", timeout=10_000)
    fake_audio.feed("Them", 1.0)

    def transcript():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/captions.txt", timeout=30) as r:
            return r.read().decode()
    qtbot.waitUntil(lambda: transcript().startswith("hello there this is"), timeout=15_000)

    panel.lan.setChecked(True)
    dlg.apply()
    _status(app, qtbot, panel, "(the address works on this network)")
    token = app.window_state.share_token
    saved, problem = load_window_state()
    # kept: the QR stays valid (where the save failed, the window's notice says why)
    assert len(token) >= 20 and saved.share_token == token, (problem, app.window.notice.text())
    assert token not in settings_path().read_text()  # window state, not a preference
    # the token hidden until asked for (a screen may be shared or streamed): the address
    # masked, no QR code; Copy still copies the whole address
    assert token not in panel.url.text() and panel.url.text().endswith("/?token=••••••••")
    assert panel.reveal.isVisible() and not panel.reveal.isChecked() and not panel.qr.isVisible()
    panel.copy.click()
    assert QGuiApplication.clipboard().text().endswith(f"/?token={token}")
    panel.reveal.click()
    assert panel.url.text().endswith(f"/?token={token}") and panel.qr.isVisible()
    expected = QImage.fromData(qr_png(panel.url.text(), scale=4))
    assert panel.qr.pixmap().toImage().size() == expected.size()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/captions.txt?token={token}") as r:
        assert r.status == 200
    assert feed.read()  # the restart for LAN ended the old feed (it was not LAN-approved)

    panel.enabled.setChecked(False)
    dlg.apply()
    _status(app, qtbot, panel, "Not sharing.")
    with socket.socket() as s:  # the port is free at once
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        panel.enabled.setChecked(True)
        panel.lan.setChecked(False)
        panel.port.setValue(taken.getsockname()[1])
        dlg.apply()
        _status(app, qtbot, panel, "is in use")
        assert "Fix: pick another port" in panel.viewers.text()
        assert "Sharing captions: Port" in app.window.notice.text()
    finally:
        taken.close()


def test_obs_captions_settings(qtbot, make_app, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    app.window.act_settings.trigger()
    panel = app.settings_control.dialog.share
    assert not panel.obs.isChecked() and not panel.obs_url.isEnabled()
    port = _free_port()  # nothing listens there: OBS is not running
    panel.obs.setChecked(True)
    panel.obs_url.setText(f"ws://127.0.0.1:{port}")
    panel.obs_password.setText("secret-obs-password")
    app.settings_control.dialog.apply()
    assert app.settings.share.obs and app.settings.share.obs_url == f"ws://127.0.0.1:{port}"

    def shown():
        app.tick()
        return "not reachable" in panel.obs_status.text()
    qtbot.waitUntil(shown, timeout=15_000)
    assert panel.obs_status.text().startswith(f"OBS captions: OBS not reachable at ws://127.0.0.1:{port}")
    assert "secret-obs-password" not in panel.obs_status.text()
    # which text OBS gets: the translation, once lines are translated
    assert panel.obs_text.isEnabled() and panel.obs_text.accessibleName() == "OBS captions carry"
    panel.obs_text.setCurrentIndex(panel.obs_text.findData("translation"))
    app.settings_control.dialog.apply()
    assert app.settings.share.obs_text == "translation"
    qtbot.waitUntil(lambda: app.sharing.service.options.obs_url != "", timeout=10_000)
    dlg = app.settings_control.dialog
    dlg.translation.target.setCurrentIndex(dlg.translation.target.findData("en"))
    dlg.apply()
    qtbot.waitUntil(lambda: app.sharing.service.options.obs_text == "translation", timeout=10_000)
    qtbot.waitUntil(lambda: app.sharing.service.obs.text == "translation", timeout=10_000)
    panel.obs.setChecked(False)
    app.settings_control.dialog.apply()
    qtbot.waitUntil(lambda: app.sharing.service.obs is None, timeout=10_000)
    assert not panel.obs_text.isEnabled()


def test_sharing_switched_on_mid_session_knows_captioning_is_on(qtbot, make_app, fake_audio,
                                                                 tmp_path, monkeypatch):
    """The issue's case: sharing switched on while captioning; the feed's snapshot said
    "state": "off". It takes the controller's current state now, and the main window says
    that captions are shared and to how many; the panel says what ticking the box does
    before Apply."""
    import json

    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    w = app.window
    qtbot.waitUntil(lambda: w.engine_status.state == "ready", timeout=10_000)
    app.toggle_captioning()
    qtbot.waitUntil(lambda: app.state == "on", timeout=10_000)
    assert not w.sharing.isVisibleTo(w)

    app.window.act_settings.trigger()
    panel = app.settings_control.dialog.share
    panel.enabled.setChecked(True)  # not applied yet: says so
    assert panel.viewers.text() == "Not sharing. Sharing starts when you press Apply or OK."
    port = _free_port()
    panel.port.setValue(port)
    app.settings_control.dialog.apply()
    qtbot.waitUntil(lambda: (app.tick(), app.sharing.service.status().running)[1], timeout=15_000)
    assert w.sharing.text() == "Sharing: 0 viewers" and w.sharing.isVisibleTo(w)

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30) as feed:
        first = next(raw for raw in feed if raw.startswith(b"data: "))
        snapshot = json.loads(first[6:])
        assert snapshot["type"] == "snapshot" and snapshot["state"] == "on", snapshot

        def counted():
            app.tick()
            return w.sharing.text() == "Sharing: 1 viewer"
        qtbot.waitUntil(counted, timeout=15_000)
    assert w.sharing.accessibleName() in ("", w.sharing.text())  # its name is its text
    panel.enabled.setChecked(False)
    assert panel.viewers.text().endswith("Sharing stops when you press Apply or OK.")
    app.settings_control.dialog.apply()
    qtbot.waitUntil(lambda: (app.tick(), not w.sharing.isVisibleTo(w))[1], timeout=15_000)


def test_allow_site_is_one_site_and_the_local_token(qtbot, make_app, tmp_path, monkeypatch):
    """"Allow site" takes exactly one scheme://host[:port]: ``*``, ``null`` or a path are one
    clear line under the field and nothing is applied or saved; the token can be asked for on
    this computer's address too, and the panel says what sharing on this computer exposes."""
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    app = make_app(AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model")))
    app.window.act_settings.trigger()
    dlg = app.settings_control.dialog
    panel = dlg.share
    assert "any program and any user logged in to this computer" in panel.exposure.text()
    assert "the microphone's too" in panel.exposure.text()
    port = _free_port()
    panel.enabled.setChecked(True)
    panel.port.setValue(port)
    for value, line in (("*", "Allow site: “*” would let every web site read the captions"),
                        ("null", "Allow site: “null” is the origin of sandboxed frames"),
                        ("https://notes.example/", "Allow site: a site has no path")):
        panel.origin.setText(value)
        assert panel.origin_problem.text().startswith(line), panel.origin_problem.text()
        assert "\n" not in panel.origin_problem.text()
        dlg.tabs.setCurrentIndex(0)
        assert dlg.apply() is False  # nothing applied: the Share tab shows the line
        assert dlg.tabs.currentIndex() == 1 and not app.settings.share.enabled
    assert not load_settings()[0].share.enabled  # nothing saved either
    panel.origin.setText("HTTPS://Notes.Example:443")
    assert panel.origin_problem.text() == "" and dlg.apply() is True
    assert app.settings.share.allow_origin == "https://notes.example"  # as browsers send it
    assert load_settings()[0].share.allow_origin == "https://notes.example"
    _status(app, qtbot, panel, "Sharing: 0 viewers connected (this computer only)")

    panel.local_token.setChecked(True)
    dlg.apply()
    _status(app, qtbot, panel, "(this computer only, with the token)")
    token = app.window_state.share_token
    assert len(token) >= 20 and token not in panel.url.text()  # hidden until asked for
    panel.reveal.setChecked(True)
    assert panel.url.text() == f"http://127.0.0.1:{port}/?token={token}"
    assert panel.new_address.isVisible() and not panel.qr.isVisible()
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/captions.txt", timeout=30)
        raise AssertionError("served without the token")
    except urllib.error.HTTPError as exc:
        assert exc.code == 403
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/captions.txt?token={token}") as r:
        assert r.status == 200
    saved = load_settings()[0].share
    assert saved.local_token and load_window_state()[0].share_token == token
    assert token not in repr(app.window_state) and token not in repr(load_window_state()[0])
    assert stat.S_IMODE(state_path().stat().st_mode) == 0o600  # a secret: the owner's only

    panel.new_address.click()  # a new token once applied: the old address stops working
    assert app.window_state.share_token == token
    dlg.apply()
    renewed = app.window_state.share_token
    assert renewed not in ("", token) and load_window_state()[0].share_token == renewed
    qtbot.waitUntil(lambda: app.sharing.service.status().url.endswith(f"?token={renewed}"),
                    timeout=15_000)
