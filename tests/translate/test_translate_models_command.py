"""`voxcap translate-models list|download|remove` against a loopback index (no network here), and
the offline install from a folder; errors are one line and a fix, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.model_index import ModelIndexServer
from support.tiny_translation import copy_package, make_archive


@pytest.fixture
def server():
    s = ModelIndexServer()
    yield s
    s.close()


def voxcap(*args, env):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", "translate-models", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_download_list_and_remove(server, tiny_package, tmp_path):
    archive = make_archive(copy_package(tiny_package, tmp_path / "src" / "fr_en", "fr", "en"),
                           tmp_path / "translate-fr_en-1_0.argosmodel")
    server.add(archive, "fr", "en")
    env = {"VOXCAP_TRANSLATE_INDEX": server.index_url, "VOXCAP_DATA_DIR": str(tmp_path / "data")}
    models = tmp_path / "data" / "translation-models"
    r = voxcap("download", "fr-en", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Installed fr-en (") and str(models / "fr_en") in r.stdout
    listed = voxcap("list", "--available", env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    size = sum(p.stat().st_size for p in (models / "fr_en").rglob("*") if p.is_file())
    assert lines[0] == f"Installed in {models}:"
    assert lines[1].split()[:3] == ["fr-en", f"{size / 1e6:.1f}", "MB"]
    assert "installed" in lines[-1] and lines[-1].split()[0] == "fr-en"
    assert voxcap("remove", "fr-en", env=env).stdout == "Removed fr-en\n"
    assert voxcap("list", env=env).stdout.startswith("No translation models")


def test_offline_install_from_a_folder(tiny_package, tmp_path):
    offline = tmp_path / "usb"
    offline.mkdir()
    make_archive(copy_package(tiny_package, tmp_path / "src" / "de_en", "de", "en"),
                 offline / "translate-de_en-1_9.argosmodel")
    env = {"VOXCAP_DATA_DIR": str(tmp_path / "data")}
    r = voxcap("download", "de-en", "--from", str(offline), env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "data" / "translation-models" / "de_en" / "model" / "model.bin").is_file()


def test_offline_install_from_a_file(tiny_package, tmp_path):
    """``--from FILE``, what an unreachable index's fix says in the terminal: the file's pair is
    installed; naming another pair says what the file held."""
    archive = make_archive(copy_package(tiny_package, tmp_path / "src" / "de_en", "de", "en"),
                           tmp_path / "translate-de_en-1_9.argosmodel")
    env = {"VOXCAP_DATA_DIR": str(tmp_path / "data")}
    r = voxcap("download", "--from", str(archive), env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Installed de-en in ")
    assert (tmp_path / "data" / "translation-models" / "de_en" / "model" / "model.bin").is_file()
    r = voxcap("download", "fr-en", "--from", str(archive), env=env)
    assert r.returncode == 2 and r.stderr.startswith(
        "error: translate-de_en-1_9.argosmodel holds de-en, not fr-en."), r.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("download", "french"), "error: 'french' is not a language pair."),
    (("remove", "fr-en"), "error: No fr-en translation model is installed"),
    (("download", "ko-en"), "error: Cannot reach http://127.0.0.1:9/index.json"),
])
def test_mistakes_are_one_line_and_a_fix(tmp_path, args, said):
    r = voxcap(*args, env={"VOXCAP_DATA_DIR": str(tmp_path),
                           "VOXCAP_TRANSLATE_INDEX": "http://127.0.0.1:9/index.json"})
    assert r.returncode == 2
    assert r.stderr.startswith(said) and "\n  fix: " in r.stderr and "Traceback" not in r.stderr
