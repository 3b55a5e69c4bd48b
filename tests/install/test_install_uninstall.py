"""installer/uninstall.sh after a real install into a temporary HOME: it says
what it will remove, with sizes, before it removes anything, and each step as it goes; settings
and API keys, transcripts and logs stay unless --purge; what voxcap's runs left in the temporary
folder goes (vLLM's rendezvous files among them), nothing else there; a folder that is not
voxcap's is refused."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time

import pytest
from support.install_helpers import new_home

from voxcap.engine.sizing.cards import needs

pytestmark = pytest.mark.slow
UID = os.getuid()


def write(path, data: bytes | str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def test_install_uninstall_says_what_goes_and_keeps_settings(tmp_path_factory, checkout):
    home = new_home(tmp_path_factory, checkout, "un-home")
    r = home.install("--remote-only", "--desktop-icon")
    # the installer's closing text says the card a server needs as README and the app do
    assert f"On a computer with {needs()}," in " ".join(r.stdout.split())
    assert home.desktop_file.exists() and (home.root / "Desktop" / "voxcap.desktop").exists()
    # what the app leaves over time: settings and keys, caches, a model, transcripts, logs
    config = home.root / ".config" / "voxcap"
    for name in ("settings.json", "serve-api-key", "remote-api-key"):
        write(config / name, "{}")
    write(home.prefix / "sessions" / "20260101-1200" / "captions.jsonl", "{}\n")
    write(home.prefix / "models" / "Voxtral" / "consolidated.safetensors", b"\0" * 2_500_000)
    write(home.root / ".cache" / "voxcap" / "vllm" / "modelinfos" / "x")
    write(home.root / ".local" / "state" / "voxcap" / "voxcap.log")
    # the temporary folder: what voxcap's runs left, and what is not voxcap's
    tmp = tmp_path_factory.mktemp("tmp")
    write(tmp / f"voxcap-{UID}" / "vllm_dist_0123abcd")
    write(tmp / "voxcap-engine-k2j4" / "stages.jsonl")
    write(tmp / "voxcap-serve-stages-1234-x7" / "logging.json")
    write(tmp / "vllm_dist_not_voxcaps")
    write(tmp / "voxcap-serve-dirs-q" / "config" / "serve-api-key")  # a test helper's
    write(tmp / "someone-else" / "file")
    env = dict(home.env, TMPDIR=str(tmp))
    before = home.files()

    r = home.uninstall("--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert home.files() == before and (tmp / f"voxcap-{UID}").exists()
    assert "Nothing was removed (--dry-run)." in r.stdout and "Removing" not in r.stdout

    r = home.uninstall(env=env)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    print(out)
    # first what goes, with sizes, and what stays; then each step; then the result
    listing, _, steps = out.partition("\nRemoving ")
    assert listing.startswith("Uninstalling voxcap removes (") and steps, out
    assert re.search(r"^ +2\.5 MB  the downloaded model: ~/\.local/share/voxcap/models$",
                     listing, re.M), listing
    assert re.search(r"^ +[\d.]+ [KMG]?B  voxcap's program and its Python environment: "
                     r"~/\.local/share/voxcap/", listing, re.M), listing
    assert re.search(rf"^ +[\d.]+ [KM]?B  temporary files of voxcap's runs \(vLLM's among them\): "
                     rf"{re.escape(str(tmp))}/voxcap-", listing, re.M), listing
    kept = listing.partition("It keeps:\n")[2]
    assert "settings and API keys: ~/.config/voxcap" in kept
    assert "your transcripts (saved sessions)" in kept and "the logs" in kept
    assert "Removing the downloaded model (2.5 MB)…" in out
    assert "Removing voxcap's program and its Python environment (" in out
    assert "voxcap is uninstalled (" in out and "freed)." in out
    assert "Your settings and API keys are kept in ~/.config/voxcap" in out
    assert "Your transcripts are kept" in out and "The logs are kept" in out
    assert home.files() == {".config/voxcap/settings.json", ".config/voxcap/serve-api-key",
                            ".config/voxcap/remote-api-key",
                            ".local/share/voxcap/sessions/20260101-1200/captions.jsonl",
                            ".local/state/voxcap/voxcap.log"}
    assert sorted(p.name for p in tmp.iterdir()) == ["someone-else", "vllm_dist_not_voxcaps",
                                                     "voxcap-serve-dirs-q"]

    r = home.uninstall("--purge", env=env)
    assert r.returncode == 0, r.stderr
    assert "settings and API keys: ~/.config/voxcap" in r.stdout.partition("\nRemoving ")[0]
    assert home.files() == set()
    assert not (home.root / ".local" / "share" / "voxcap").exists()


def test_install_uninstall_leaves_a_running_voxcaps_temporary_files(tmp_path_factory, checkout):
    """A voxcap still running with this temporary folder (a checkout's, a test's: the
    installed one is refused earlier) keeps its engine's working folders there."""
    home = new_home(tmp_path_factory, checkout, "running")
    home.install("-q")
    left = [home.tmp / f"voxcap-{UID}" / "vllm_dist_0123abcd", home.tmp / "voxcap-engine-x" / "s"]
    for path in left:
        write(path)
    running = subprocess.Popen(["bash", "-c", "exec -a voxcap-elsewhere sleep 120"],
                               env=home.env)
    try:
        r = home.uninstall()
        assert r.returncode == 0, r.stderr
        assert f"temporary files of voxcap's runs (voxcap is running: process {running.pid})" \
            in r.stdout.partition("It keeps:\n")[2], r.stdout
        assert all(path.exists() for path in left)
    finally:
        running.kill()
        running.wait(10)
    r = home.uninstall()
    assert "Removing temporary files of voxcap's runs" in r.stdout, r.stdout
    assert not any(path.exists() for path in left)


def in_terminal(home, answer: bytes, *args: str) -> tuple[int, str]:
    """uninstall.sh run in a terminal (a pseudo-terminal), typing ``answer`` when it asks."""
    master, slave = os.openpty()
    proc = subprocess.Popen(["bash", str(home.checkout / "installer" / "uninstall.sh"), *args],
                            stdin=slave, stdout=slave, stderr=slave, env=home.env, cwd=home.root,
                            start_new_session=True)
    os.close(slave)
    out, asked, deadline = b"", False, time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the terminal's other end closed: it exited
                    break
                out += chunk
                if not asked and b"Remove them? [Y/n] " in out:
                    os.write(master, answer)
                    asked = True
            elif proc.poll() is not None:
                break
        return proc.wait(30), out.decode().replace("\r\n", "\n")
    finally:
        os.close(master)


def test_install_uninstall_in_a_terminal_asks_first(tmp_path_factory, checkout):
    home = new_home(tmp_path_factory, checkout, "asked")
    home.install("-q")
    write(home.root / ".cache" / "voxcap" / "x")
    before = home.files()
    code, out = in_terminal(home, b"n\n")
    assert code == 1 and "Remove them? [Y/n] n\nNothing was removed." in out, out
    assert out.index("Uninstalling voxcap removes (") < out.index("Remove them?")
    assert home.files() == before
    code, out = in_terminal(home, b"\n")  # Enter: yes, as apt
    assert code == 0 and "voxcap is uninstalled (" in out, out
    assert not (home.root / ".cache" / "voxcap").exists() and not home.desktop_file.exists()


def test_install_uninstall_refuses_a_foreign_folder(tmp_path_factory, checkout):
    home = new_home(tmp_path_factory, checkout, "foreign")
    (home.root / "docs").mkdir()
    (home.root / "docs" / "letter.txt").write_text("keep me")
    r = home.uninstall("--prefix", str(home.root / "docs"))
    assert r.returncode == 2 and "does not look like voxcap's folder" in r.stderr
    assert (home.root / "docs" / "letter.txt").read_text() == "keep me"
