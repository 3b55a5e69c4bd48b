"""The first hour as a newcomer without an NVIDIA GPU walks it on this machine: the
install into a fresh HOME, the applications menu's command (the .desktop file's Exec line, run
as it is) in a real X window, the welcome dialog, the self-check, Start captioning, quit,
uninstall. Driven as a keyboard or screen-reader user drives it: over AT-SPI, from another
process, through the app's real widgets. A screenshot of each step goes to a folder the test
prints; each step's text is checked for what a newcomer needs: it names the next step, no
traceback, no command-line flag where a button would do.

Costs: the install (~30-60 s, offline, see support/install_helpers.py) and one engine start
of the tiny model on vLLM's CPU build with random weights, without compilation
(~40-90 s on 2 cores)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from support.app_walk import Walk
from support.app_walk import caption_words as _caption_words
from support.app_walk import labels as _labels
from support.app_walk import node as _node
from support.app_walk import overlay as _overlay
from support.app_walk import processes_of as _processes_of
from support.app_walk import reads_well as _reads_well
from support.app_walk import until as _until
from support.atspi import AtspiBus, pyatspi_available
from support.install_helpers import exec_argv, new_home
from support.pulse import PulseServer, speech_wav
from support.xvfb import SPEECH_THEM, Xvfb

pytestmark = [
    pytest.mark.slow, pytest.mark.engine, pytest.mark.timeout(900),
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]
ENGINE_START_S = 480  # the tiny model on a loaded 2-core machine


def test_install_walk_the_first_hour_without_a_gpu(tmp_path_factory, checkout):
    shots = Path(tempfile.mkdtemp(prefix="voxcap-first-hour-"))
    print(f"\nscreenshots of the walk: {shots}")
    home = new_home(tmp_path_factory, checkout, "walk")
    t0 = time.perf_counter()
    out = home.install().stdout
    print(f"install: {time.perf_counter() - t0:.0f} s")
    # 1. the installer's last words: where to start it
    assert "Start it from your applications menu" in out and "Traceback" not in out
    # One thing a newcomer would not have: Settings → Engine → "Fast start" (no compilation).
    # With the default (compiled) the CPU build's first start compiles for more than 5 minutes
    # here; the choice of engine is still left to the welcome dialog (no model is set).
    config = home.root / ".config" / "voxcap"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"enforce_eager": True}))
    model = home.root / "voxcap self-check model"
    r = home.run_voxcap("make-tiny-model", str(model))  # README: the no-GPU self-check
    assert r.returncode == 0, r.stderr

    pulse = PulseServer(tmp_path_factory.mktemp("pulse")).start(apply_env=False)
    try:
        with Xvfb(1400, 900) as x, AtspiBus() as bus:
            x.start_compositor()
            env = dict(home.env, DISPLAY=x.display, DBUS_SESSION_BUS_ADDRESS=bus.address,
                       QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", PULSE_SERVER=pulse.server,
                       OMP_NUM_THREADS="1", VLLM_CPU_OMP_THREADS_BIND="nobind")
            for var in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY"):  # the desktop's own: X11 here
                env.pop(var, None)
            log = (shots / "app-output.txt").open("w")
            argv = exec_argv(home.desktop_file)  # 2. the applications menu's command, as it is
            app = subprocess.Popen(argv, env=env, cwd=home.root, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
            try:
                shown = _walk_the_app(Walk(bus, x, app.pid, shots), model, pulse,
                                      tmp_path_factory)
                app.wait(120)  # quit: the app and everything it started end
                assert app.returncode == 0, (shots / "app-output.txt").read_text()[-3000:]
                leftover = _until(lambda: _processes_of(app.pid), lambda p: p == [], 90,
                                  "the app's processes ending")
                assert leftover == []
            finally:
                if app.poll() is None:
                    os.killpg(app.pid, signal.SIGKILL)
                    app.wait(10)
                log.close()
    finally:
        pulse.stop()
    # what the overlay showed is the engine's text, as the journal kept it (not a placeholder,
    # an error or another window's words): every word of it is in the session's transcript
    transcript = tmp_path_factory.mktemp("export") / "walk.txt"
    r = home.run_voxcap("export", "last", "-o", str(transcript))
    assert r.returncode == 0, r.stderr
    kept = set(transcript.read_text(encoding="utf-8").split())
    words = [w for row in shown.splitlines() for w in _caption_words(row)]
    assert words and set(words) <= kept, (shown, sorted(set(words) - kept))
    assert (home.root / ".cache" / "voxcap").is_dir()  # the engine's caches were written here
    assert not (home.root / ".cache" / "vllm").exists()

    # 7. uninstall: all of voxcap but the settings, the transcripts and the logs (all three
    # go with --purge), after saying what goes and what stays
    r = home.uninstall()
    assert r.returncode == 0, r.stderr
    _reads_well(r.stdout, "uninstall", terminal=True)
    assert r.stdout.startswith("Uninstalling voxcap removes (") and "Removing " in r.stdout
    assert "Your transcripts are kept" in r.stdout and "settings and API keys are kept" in r.stdout
    left = {f for f in home.files() if not f.startswith(".config/pulse/")}  # libpulse's own
    assert not any(f.startswith((".cache/", ".local/share/applications/", ".local/bin/"))
                   or f.startswith(".config/") and not f.startswith(".config/voxcap/")
                   for f in left), left
    assert all(f.startswith((".local/share/voxcap/sessions/", ".local/state/voxcap/",
                             ".config/voxcap/"))
               or f.startswith("voxcap self-check model/") for f in left), left
    assert any(f.startswith(".local/share/voxcap/sessions/") for f in left)  # the walk's session
    assert ".config/voxcap/settings.json" in left
    r = home.uninstall("--purge")
    assert r.returncode == 0, r.stderr
    assert {f for f in home.files() if not f.startswith(("voxcap self-check model/",
                                                          ".config/pulse/"))} == set()


def _walk_the_app(w: Walk, model: Path, pulse: PulseServer, tmp_path_factory) -> str:
    """The walk through the app's windows; returns the captions the overlay showed."""
    # 3. the welcome dialog: no GPU here, said plainly, with the way forward
    tree = _until(w.tree, lambda t: _node(t, "dialog", "Welcome") is not None, 90,
                  "the welcome dialog")
    gpu = _labels(tree)["GPU check"]
    assert "no NVIDIA graphics card" in gpu and "voxcap serve" in gpu and "NVML" not in gpu
    w.shot("welcome")
    # the self-check: the folder `voxcap make-tiny-model` wrote (no weights), typed in
    w.press("radio button", "Use a model folder")
    w.type("Model folder", str(model))
    tree = _until(w.tree, lambda t: _node(t, "check box", "Self-check only") is not None
                  and "showing" in _node(t, "check box", "Self-check only")["states"], 30,
                  "the self-check offered")
    check = _labels(tree)["Model folder check"]
    assert "consolidated.safetensors" in check and "Self-check only" in check  # what to do
    _reads_well(check, "folder check")
    w.press("check box", "Self-check only")
    tree = _until(w.tree, lambda t: "enabled" in _node(t, "push button", "Use this")["states"],
                  10, "“Use this” enabled for the self-check")
    assert "gibberish" in _labels(tree)["Model folder check"]
    w.shot("self-check-chosen")
    w.press("push button", "Use this")

    # 4. the engine starts; ready says what to press and that the words will be gibberish
    tree = _until(w.tree, lambda t: _labels(t).get("Engine status", "").startswith(
        ("Engine ready", "Engine error")), ENGINE_START_S, "the engine ready")
    status = _labels(tree)["Engine status"]
    assert status.startswith("Engine ready"), (status, _labels(tree).get(
        "How to fix the engine problem"))
    assert "Press Start captioning (F5)" in status and "gibberish" in status
    _reads_well(status, "engine ready")
    w.shot("engine-ready")

    # 5. Start captioning: the computer's sound, captioned in the overlay and the history
    w.press("push button", "Start captioning")
    _until(w.tree, lambda t: _labels(t).get("Captioning state") == "Captioning", 60,
           "captioning on")
    wav = speech_wav(tmp_path_factory.mktemp("speech") / "them.wav", SPEECH_THEM)
    player = pulse.play(wav, wait=False)
    tree = _until(w.tree, lambda t: "No captions yet" not in _overlay(t), 180,
                  "captions in the overlay")
    player.wait(60)
    shown = _overlay(tree)
    notice = _labels(tree).get("Latest notice", "")
    _reads_well(notice, "notice while captioning")
    w.shot("captioning")
    w.press("push button", "Stop captioning")
    _until(w.tree, lambda t: _labels(t).get("Captioning state") == "Not captioning", 60,
           "captioning off")
    w.shot("stopped")

    # 6. quit from the menu, as a user does
    w.press("menu item", "Quit")
    return shown
