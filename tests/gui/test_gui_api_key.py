"""The vLLM server's API key is visible: where the app's key comes from ("key: found in …",
"no key: the server will refuse …"), a field and a key file to give one (stored owner-only),
and on this computer the key ``voxcap serve`` made here is used without copying it."""

from __future__ import annotations

import stat

from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.engine.remote.settings import save_api_key
from voxcap.gui.application import engine_settings
from voxcap.gui.settings.api_key_row import ApiKeyRow


def test_the_key_row_says_where_the_key_comes_from_and_takes_one(qtbot, tmp_path, monkeypatch):
    cfg = tmp_path / "cfg"
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(cfg))
    row = ApiKeyRow("ws://gpu-box:8000")
    qtbot.addWidget(row)
    assert row.status.text().startswith("no key: the server will refuse the connection")
    assert str(cfg / "remote-api-key") in row.status.text()  # where a given key goes

    save_api_key(cfg / "serve-api-key", "vx-made-here")  # `voxcap serve` ran on this computer
    row.refresh("ws://127.0.0.1:8000")
    assert row.status.text() == f"key: this computer's server key, found in {cfg / 'serve-api-key'}"
    es = engine_settings(AppSettings(engine=EngineChoice(kind="remote", server_url="ws://127.0.0.1:8000")))
    assert es.api_key == "vx-made-here"  # and the app uses it
    row.refresh("ws://gpu-box:8000")  # not for another computer's server
    assert row.status.text().startswith("no key")
    assert engine_settings(AppSettings(engine=EngineChoice(kind="remote",
                                                           server_url="ws://gpu-box:8000"))).api_key \
        is None

    given = tmp_path / "copied-key"
    given.write_text("vx-from-the-gpu-box\n")
    given.chmod(0o644)
    assert not row.use_file(str(given))  # one line naming the problem and the fix
    assert "can be read by other users" in row.status.text() and "chmod 600" in row.status.text()
    given.chmod(0o600)
    assert row.use_file(str(given))
    stored = cfg / "remote-api-key"
    assert stored.read_text().strip() == "vx-from-the-gpu-box"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert row.status.text() == f"key: found in {stored}"
    assert engine_settings(AppSettings(engine=EngineChoice(kind="remote",
                                                           server_url="ws://gpu-box:8000"))).api_key \
        == "vx-from-the-gpu-box"

    row.field.setText("vx-pasted")
    row.store.click()
    assert stored.read_text().strip() == "vx-pasted" and row.field.text() == ""
    row.field.setText("two\nlines")
    assert not row.use_key(row.field.text()) and "line break" in row.status.text()


def test_the_dialogs_show_the_key_and_settings_only_what_the_engine_uses(qtbot, tmp_path,
                                                                         monkeypatch):
    from voxcap.gui.first_run import FirstRunDialog
    from voxcap.gui.settings.dialog import SettingsDialog

    cfg = tmp_path / "cfg"
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(cfg))
    first = FirstRunDialog(gpus=[])  # no GPU: "Use a vLLM server" is chosen
    qtbot.addWidget(first)
    first.show()
    assert first.key_row.isVisible() and first.key_row.isEnabled()
    assert first.key_row.status.text().startswith("no key: the server will refuse")
    save_api_key(cfg / "serve-api-key", "vx-made-here")
    first.server.setText("ws://127.0.0.1:8000")  # `voxcap serve` on this computer
    assert first.key_row.status.text().startswith("key: this computer's server key")

    dlg = SettingsDialog(AppSettings(engine=EngineChoice(kind="remote", server_url="ws://gpu-box:8000")))
    qtbot.addWidget(dlg)
    dlg.show()
    eng = dlg.engine_panel
    form = eng.form
    assert form.isRowVisible(eng.api_key) and form.isRowVisible(eng.server_url)
    assert eng.api_key.status.text().startswith("no key")
    for w in (eng.graph_mode, eng.precision, eng.kv, eng.max_len, eng.max_len_note):
        assert not form.isRowVisible(w), w  # the server's own: not set nor estimated here
    eng.engine.setCurrentIndex(eng.engine.findData("local"))
    assert form.isRowVisible(eng.graph_mode) and form.isRowVisible(eng.max_len_note)
    assert not form.isRowVisible(eng.api_key) and not form.isRowVisible(eng.server_url)


def test_the_cli_finds_the_key_as_the_app_does(tmp_path, monkeypatch):
    """`voxcap live --engine remote --server ws://127.0.0.1:…` on the computer that runs
    `voxcap serve`: its key, without a copy; another computer's server: none."""
    from argparse import Namespace

    from voxcap.commands.options import remote_settings

    cfg = tmp_path / "cfg"
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(cfg))
    save_api_key(cfg / "serve-api-key", "vx-made-here")

    def args(server):
        return Namespace(server=server, server_model="m", model=None, api_key_env=None,
                         api_key_file=None, delay_ms=None)
    assert remote_settings(args("ws://127.0.0.1:8000")).api_key == "vx-made-here"
    assert remote_settings(args("ws://gpu-box:8000")).api_key is None
