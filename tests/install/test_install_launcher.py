"""The desktop launcher's command (voxcap-gui) when the app cannot start, and the installer's
decisions before it builds anything (--dry-run): GPU or not, missing system packages, Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from voxcap import __version__, launcher

REPO = Path(__file__).resolve().parents[2]


def test_install_launcher_version(capsys):
    assert launcher.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"voxcap {__version__}"


@pytest.fixture
def shown(monkeypatch):
    messages: list[str] = []
    monkeypatch.setattr(launcher, "show_error", messages.append)
    return messages


def test_install_launcher_shows_the_apps_error(monkeypatch, shown):
    """`voxcap gui` failing with one of voxcap's errors: its message and fix reach the person
    who double-clicked, and the log."""
    import voxcap.cli

    def failing_gui(argv):
        assert argv[0] == "gui"
        print("error: The desktop app needs PySide6: no module", file=sys.stderr)
        print("  fix: pip install 'voxcap[gui]'", file=sys.stderr)
        return 2

    monkeypatch.setattr(voxcap.cli, "main", failing_gui)
    assert launcher.main([]) == 2
    (text,) = shown
    assert "error: The desktop app needs PySide6" in text and "fix: pip install" in text
    assert "voxcap doctor" in text
    log = launcher.log_path()
    assert "The desktop app needs PySide6" in log.read_text()
    assert str(log) in text


def test_install_launcher_reports_a_broken_install(monkeypatch, shown):
    import voxcap.cli

    def broken(argv):
        raise ImportError("No module named 'voxcap.gui.application'")

    monkeypatch.setattr(voxcap.cli, "main", broken)
    assert launcher.main([]) == 1
    (text,) = shown
    assert "error in this installation" in text and "voxcap.gui.application" in text
    assert "Re-running the installer" in text
    assert "Traceback" in launcher.log_path().read_text()


def test_install_launcher_without_qt_uses_a_dialog_tool(tmp_path, monkeypatch):
    """No usable Qt: the message goes through zenity (here a stand-in that records it)."""
    record = tmp_path / "zenity.args"
    fake = tmp_path / "bin" / "zenity"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{record}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("VOXCAP_LAUNCHER_NO_QT", "1")
    launcher.show_error("No sound server is running.\n  fix: start it")
    args = record.read_text().splitlines()
    assert "--error" in args and f"--title={launcher.TITLE}" in args
    assert "--text=No sound server is running." in args


# ------------------------------------------------------------------ installer --dry-run ----
def dry_run(tmp_path: Path, *args: str, path_dirs: tuple[Path, ...] = (), env: dict | None = None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "VOXCAP_"))}
    full.update(HOME=str(home), PATH=":".join([*map(str, path_dirs), "/usr/bin", "/bin"]))
    full.update(env or {})
    return subprocess.run(["bash", str(REPO / "installer" / "install.sh"), "--dry-run",
                           "--python", sys.executable, *args], env=full, capture_output=True,
                          text=True, timeout=60)


def fake_tool(directory: Path, name: str, script: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(f"#!/bin/sh\n{script}\n")
    (directory / name).chmod(0o755)
    return directory


NVIDIA_SMI = """case "$1" in
  --query-gpu=name) echo "NVIDIA H200" ;;
  *) echo "| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: {cuda}     |" ;;
esac"""


def test_install_dry_run_with_nvidia_gpu(tmp_path):
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", NVIDIA_SMI.format(cuda="13.0"))
    r = dry_run(tmp_path, path_dirs=(tools,))
    assert r.returncode == 0, r.stderr
    assert "engine:  GPU build: vLLM with CUDA, for your NVIDIA H200" in r.stdout
    assert "would install voxcap[gpu,audio,gui,translate] @ file://" in r.stdout
    assert "driver" not in r.stdout
    # a driver too old for PyTorch's CUDA 13.0 build: said, with what to do
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", NVIDIA_SMI.format(cuda="12.8"))
    r = dry_run(tmp_path, path_dirs=(tools,))
    assert "Your NVIDIA driver supports CUDA 12.8; voxcap's GPU build needs CUDA 13.0, i.e. " \
        "NVIDIA driver 580 or newer" in r.stdout


def test_install_dry_run_without_gpu(tmp_path):
    r = dry_run(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "no local engine, because no NVIDIA GPU was found (`nvidia-smi` is not installed" \
        in r.stdout
    assert "would install voxcap[audio,gui,translate] @ file://" in r.stdout
    assert "--cpu adds vLLM's CPU build" in r.stdout
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    r = dry_run(tmp_path, path_dirs=(tools,))
    assert "the NVIDIA driver is not working" in r.stdout
    assert "`voxcap serve` there prints the address" in r.stdout  # the way to captions
    r = dry_run(tmp_path, "--cpu")
    assert "CPU build of vLLM" in r.stdout and "voxcap[cpu,audio,gui,translate]" in r.stdout
    # what it costs and what it is for
    assert "about 3.5 GB on disk" in r.stdout and "far slower than real time" in r.stdout


def test_install_dry_run_names_missing_system_packages(tmp_path):
    r = dry_run(tmp_path, env={"VOXCAP_INSTALL_ASSUME_MISSING":
                               "libportaudio.so.2 libxcb-cursor.so.0 alsa:pcm_pulse"})
    assert r.returncode == 0, r.stderr
    assert "  sudo apt install libportaudio2 libasound2-plugins libxcb-cursor0\n" in r.stdout
    assert "audio capture (PortAudio)" in r.stdout and "the app's windows (Qt)" in r.stdout
    r = dry_run(tmp_path)
    assert "sudo apt install" not in r.stdout  # this machine has them all


def test_install_refuses_an_old_python(tmp_path):
    old = fake_tool(tmp_path / "py", "python3.9", "exit 1") / "python3.9"
    r = dry_run(tmp_path, "--python", str(old))
    assert r.returncode == 1
    assert "is not Python 3.11 to 3.14" in r.stderr and "--python" in r.stderr
