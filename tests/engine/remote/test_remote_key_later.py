"""The remote engine started without a key (none given, none found) takes the one made while it
waits for its server: the app pointed at this computer's address before ``voxcap serve`` first
ran there, which writes its key as it starts (without it: HTTP 401 once the server is up).
A key given is kept; a server elsewhere does not get this computer's server key."""

from __future__ import annotations

from voxcap.engine.remote.engine import RemoteEngine
from voxcap.engine.remote.settings import (
    RemoteSettings,
    default_api_key_path,
    local_server_key_path,
    save_api_key,
)


def test_a_key_made_while_waiting_is_taken(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path))
    local = RemoteEngine(RemoteSettings("ws://127.0.0.1:9", "", start_retry_s=None))
    elsewhere = RemoteEngine(RemoteSettings("ws://gpu-box.example:8000", "", start_retry_s=None))
    given = RemoteEngine(RemoteSettings("ws://127.0.0.1:9", "", api_key="typed",
                                        start_retry_s=None))
    local._find_key()
    assert local.settings.api_key is None  # nothing yet: still none
    save_api_key(local_server_key_path(), "serve-made")  # voxcap serve starts
    for eng in (local, elsewhere, given):
        eng._find_key()
    assert local.settings.api_key == "serve-made"
    assert elsewhere.settings.api_key is None
    assert given.settings.api_key == "typed"
    save_api_key(default_api_key_path(), "pasted")  # one given in the dialog meanwhile
    elsewhere._find_key()
    assert elsewhere.settings.api_key == "pasted"
