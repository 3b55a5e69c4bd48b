"""The app's key is stored as a file of its own, never written through a symbolic link planted
at its path (which could point at any file the planter chose)."""

from __future__ import annotations

from voxcap.gui.settings.api_key_row import ApiKeyRow


def test_storing_a_key_never_writes_through_a_planted_link(qtbot, tmp_path, monkeypatch):
    """A symbolic link planted at the key's path (pointing at a file of the planter's choice):
    the Settings key row stores nothing through it and says why in one line with the fix."""
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "cfg"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("untouched\n")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "remote-api-key").symlink_to(elsewhere)
    row = ApiKeyRow("ws://gpu-box:8000")
    qtbot.addWidget(row)
    assert not row.use_key("vx-pasted")
    assert elsewhere.read_text() == "untouched\n"
    assert row.status.text().startswith("✗ The API key file ") and "symbolic link" in \
        row.status.text() and "Fix: remove the link" in row.status.text()
