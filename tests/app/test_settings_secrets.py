"""The settings file holds a secret (the OBS password; the share token is window state, its file
tested in test_window_state): written owner-only (0600)
whatever the umask, atomically through a temporary file of its own (concurrent saves never
share one, a reader never sees half a file), an older file others could read made owner-only
when loaded, and the secrets never in a repr or a note; the allowed site is checked to one
exact site when the file is loaded."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from voxcap.app.settings import AppSettings, ShareSettings, load_settings, save_settings
from voxcap.engine.choice import EngineChoice
from voxcap.share import ShareOptions

TOKEN, PASSWORD = "tok-Secret-123456789", "obs-Secret-pw"


def _secret_settings() -> AppSettings:
    return AppSettings(share=ShareSettings(enabled=True, lan=True, obs=True,
                                           obs_password=PASSWORD))


@pytest.fixture
def wide_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_written_owner_only_and_atomically(tmp_path, wide_umask):
    path = tmp_path / "cfg" / "settings.json"
    save_settings(_secret_settings(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_settings(path)[0].share.obs_password == PASSWORD
    path.chmod(0o644)  # as an older voxcap left it
    save_settings(_secret_settings(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # many saves at once (the app's thread and a dialog): every one whole, no temporary left
    stop = threading.Event()
    seen_bad = []

    def read():
        while not stop.is_set():
            try:
                json.loads(path.read_text())
            except ValueError as exc:
                seen_bad.append(repr(exc))
    reader = threading.Thread(target=read)
    reader.start()
    savers = [threading.Thread(target=lambda i=i: [save_settings(
        AppSettings(engine=EngineChoice(delay_ms=480 + 80 * (i % 3)),
                    share=ShareSettings(obs_password=PASSWORD)), path)
        for _ in range(30)]) for i in range(4)]
    for t in savers:
        t.start()
    for t in savers:
        t.join()
    stop.set()
    reader.join()
    assert not seen_bad, seen_bad[:3]
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_others_could_read_is_made_owner_only_when_loaded(tmp_path, wide_umask):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"share": {"obs_password": PASSWORD}}))
    path.chmod(0o644)
    settings, problem = load_settings(path)
    assert problem is None and settings.share.obs_password == PASSWORD
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("{not json")  # a damaged file is kept aside owner-only too
    path.chmod(0o644)
    load_settings(path)
    (backup,) = tmp_path.glob("settings.json.corrupt-*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_secrets_are_in_no_repr_and_no_note(tmp_path):
    s = _secret_settings()
    options = ShareOptions(True, True, 8765, "", TOKEN, "ws://127.0.0.1:4455", PASSWORD)
    for text in (repr(s), repr(s.share), str(s), repr(options)):
        assert TOKEN not in text and PASSWORD not in text, text
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"share": {"obs_password": ["hunter2"]}}))
    _, problem = load_settings(path)
    assert "share.obs_password = (hidden) (must be text)" in problem
    assert "hunter2" not in problem


@pytest.mark.parametrize(("value", "kept"), [
    ("https://notes.example", "https://notes.example"),
    ("HTTP://LOCALHOST:3000", "http://localhost:3000"),
    ("https://notes.example:443", "https://notes.example"),
    ("*", ""), ("null", ""), ("https://notes.example/", ""), ("https://a.example,https://b", ""),
    ("javascript:alert(1)", ""),
])
def test_the_allowed_site_is_checked_when_loaded(tmp_path, value, kept):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"share": {"allow_origin": value}}))
    settings, problem = load_settings(path)
    assert settings.share.allow_origin == kept
    if kept:
        assert problem is None
    else:
        assert problem.startswith("Some settings were invalid and are back to their defaults: "
                                  "share.allow_origin = ")
        assert problem.count("\n") == 0
