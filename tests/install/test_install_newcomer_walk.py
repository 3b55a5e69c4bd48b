"""The first walk, from a fresh home: a newcomer without an NVIDIA GPU installs
voxcap, makes the tiny model with its weights, points the app (started from its .desktop file,
under Xvfb, driven over AT-SPI from another process) at ``voxcap serve``'s loopback address
before that server is up, starts the server, captions speech played into the sound server,
switches sharing on mid-session, reads the page in chromium, quits and uninstalls. Each of the
issue's points is checked where the walk reaches it:

1. the engine status is painted as it is said: the label's text (what is drawn) and its
   accessible name agree at each state; while the server is down it says it waits and retries;
2. the server started after the app tried is picked up without a restart (or a Retry);
3. the key: before the server ran, "no key: the server will refuse"; with it, Settings says the
   key is this computer's server key, found in serve's file (nothing copied by hand);
4. the welcome dialog's GPU sentence is ``cards.needs()`` (the installer's: test_cards.py);
5. ``voxcap serve`` printed its start-up stages, importing… to ready, before "Ready:";
6. sharing switched on mid-session: the feed's snapshot says "on", the main window
   "Sharing: N viewers" (1 while the page is open);
7. the meter in remote mode shows the server and the round trip, and none of graph mode,
   precision, GPU memory and the other rows about a local GPU;
8. the share panel says what Apply will do before it is pressed; uninstall says what it removes
   before removing it and keeps the settings and both keys without --purge;
9-10. the installer's index check: tests/install/test_install_indexes.py.

Screenshots of each step (and the page) go to a folder the test prints.
Costs: the install (~30-60 s, offline) and one ``voxcap serve`` start of the tiny model on
vLLM's CPU build (--eager: ~60-120 s on 2 loaded cores)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from support import browser
from support.app_walk import Walk, labels, node, overlay, processes_of, reads_well, until
from support.atspi import AtspiBus, pyatspi_available, walk
from support.install_helpers import Home, exec_argv, new_home
from support.pulse import PulseServer, speech_wav
from support.vllm_server import VllmServer, free_port
from support.xvfb import SPEECH_THEM, Xvfb

from voxcap.engine.sizing.cards import needs
from voxcap.gui.main.meter_panel import MeterWidget

pytestmark = [
    pytest.mark.slow, pytest.mark.engine, pytest.mark.timeout(1500),
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
    pytest.mark.skipif(not browser.available(), reason="chromium and chromedriver not installed"),
]
SERVE_START_S = 600  # the tiny model's server on a loaded 2-core machine
LOCAL_ONLY = [title for key, title in MeterWidget.FIELDS if key in MeterWidget.LOCAL_ONLY]


class HomeServe(VllmServer):
    """``voxcap serve`` as the newcomer runs it: the installed command, in the new HOME (its
    config folder, where the key goes and the app looks), the line make-tiny-model printed."""

    def __init__(self, home: Home, printed: list[str], port: int, log_path: Path) -> None:
        # the new HOME's folders, not those the test run set for itself (VOXCAP_*_DIR)
        env = dict(home.env, VOXCAP_CONFIG_DIR=str(home.root / ".config" / "voxcap"),
                   VOXCAP_STATE_DIR=str(home.root / ".local" / "state" / "voxcap"),
                   VOXCAP_DATA_DIR=str(home.root / ".local" / "share" / "voxcap"),
                   VOXCAP_CACHE_DIR=str(home.root / ".cache" / "voxcap"))
        super().__init__(printed[2], port=port, env=env, log_path=log_path)
        shutil.rmtree(self.home, ignore_errors=True)  # its own folders are not used here
        self.printed = printed

    def command(self) -> list[str]:
        # --max-model-len: a smaller KV cache, a quicker start on the CPU build
        return [*self.printed, "--port", str(self.port), "--max-model-len", "1024"]


def _serve_line(make_tiny_out: str, home: Home) -> list[str]:
    """make-tiny-model's "voxcap serve FOLDER … --eager" line, as a person copies it."""
    line = next(ln for ln in make_tiny_out.splitlines() if ln.strip().startswith("voxcap serve "))
    argv = shlex.split(line.split("#", 1)[0])
    assert "--eager" in argv, line
    return [str(home.prefix / "venv" / "bin" / "voxcap"), *argv[1:]]


def _status(tree: dict) -> dict:
    """The engine status label's node; its text (drawn) and name (said) must agree."""
    found = next(n for n in walk(tree) if n.get("role") == "label"
                 and str(n.get("description", "")).startswith("Engine status"))
    assert found.get("text", found["name"]) == found["name"], found  # point 1
    return found


def _status_until(w: Walk, check, timeout: float, what: str) -> dict:
    """The tree once the engine status's name passes ``check``; the status said if never."""
    seen = []

    def read() -> dict:
        tree = w.tree()
        seen[:] = [_status(tree)["name"]]
        return tree
    try:
        return until(read, lambda t: check(_status(t)["name"]), timeout, what)
    except AssertionError:
        raise AssertionError(f"{what}: never happened; the engine status said {seen}") from None


def _showing(tree: dict) -> dict[str, str]:
    """Labels on screen: description -> name."""
    return {n["description"].split(". ")[0]: n["name"] for n in walk(tree)
            if n.get("role") == "label" and n.get("description")
            and "showing" in n.get("states", ())}


def test_install_newcomer_walk_issue_34(tmp_path_factory, checkout):
    shots = Path(tempfile.mkdtemp(prefix="voxcap-newcomer-walk-"))
    print(f"\nscreenshots of the walk: {shots}")
    home = new_home(tmp_path_factory, checkout, "newcomer")
    t0 = time.perf_counter()
    out = home.install().stdout
    print(f"install: {time.perf_counter() - t0:.0f} s")
    assert "Start it from your applications menu" in out
    # (4: the installer's own GPU sentence comes with --cpu/--remote-only, not with the
    # --extras of an offline test install: tests/engine/sizing/test_cards.py runs its command)
    model = home.root / "tiny model"
    r = home.run_voxcap("make-tiny-model", str(model), "--weights", timeout=600)
    assert r.returncode == 0, r.stderr
    serve_argv = _serve_line(r.stdout, home)
    # the share port: a free one, so that parallel runs do not clash (the default is 8765)
    share_port = free_port()
    config = home.root / ".config" / "voxcap"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"share": {"port": share_port}}))
    port = free_port()
    server = HomeServe(home, serve_argv, port, shots / "serve-output.txt")

    pulse = PulseServer(tmp_path_factory.mktemp("pulse")).start(apply_env=False)
    try:
        with Xvfb(1280, 900) as x, AtspiBus() as bus:
            x.start_compositor()
            env = dict(home.env, DISPLAY=x.display, DBUS_SESSION_BUS_ADDRESS=bus.address,
                       QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", PULSE_SERVER=pulse.server)
            for var in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY"):
                env.pop(var, None)
            log = (shots / "app-output.txt").open("w")
            app = subprocess.Popen(exec_argv(home.desktop_file), env=env, cwd=home.root,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                _walk(Walk(bus, x, app.pid, shots), server, pulse, share_port,
                      tmp_path_factory)
                app.wait(120)
                assert app.returncode == 0, (shots / "app-output.txt").read_text()[-3000:]
                until(lambda: processes_of(app.pid), lambda p: p == [], 90,
                      "the app's processes ending")
            finally:
                if app.poll() is None:
                    os.killpg(app.pid, signal.SIGKILL)
                    app.wait(10)
                log.close()
                server.stop()
                for pid in processes_of(server.proc.pid) if server.proc else ():
                    os.kill(pid, signal.SIGKILL)
    finally:
        pulse.stop()
    assert server.proc.returncode == 0, server.log_tail()

    # 8. uninstall: what goes and what stays, said first; settings and both keys kept
    assert (config / "serve-api-key").is_file()
    r = home.uninstall()
    assert r.returncode == 0, r.stderr
    reads_well(r.stdout, "uninstall", terminal=True)
    assert r.stdout.startswith("Uninstalling voxcap removes (") and "Removing " in r.stdout
    said, _, done = r.stdout.partition("Removing ")  # what it said before removing anything
    assert "settings and API keys: ~/.config/voxcap" in said.partition("It keeps:")[2], r.stdout
    assert "Your settings and API keys are kept" in done, r.stdout
    left = home.files()
    assert {".config/voxcap/settings.json", ".config/voxcap/serve-api-key"} <= left, left
    assert not any(f.startswith((".local/share/applications/", ".local/bin/")) for f in left)
    r = home.uninstall("--purge")
    assert r.returncode == 0, r.stderr
    assert not any(f.startswith(".config/voxcap/") for f in home.files())


def _walk(w: Walk, server: HomeServe, pulse: PulseServer, share_port: int,
          tmp_path_factory) -> None:
    # 4. the welcome dialog: the one GPU sentence
    tree = until(w.tree, lambda t: node(t, "dialog", "Welcome") is not None, 120,
                 "the welcome dialog")
    gpu = labels(tree)["GPU check"]
    assert needs() in gpu, gpu
    w.shot("welcome")
    # "Use a vLLM server" with serve's address, before the server runs
    w.press("radio button", "Use a vLLM server")
    w.type("vLLM server address", server.url)
    tree = until(w.tree, lambda t: labels(t).get("Server API key", "").startswith("no key"),
                 30, "the key row following the address")
    key = labels(tree)["Server API key"]
    assert "the server will refuse" in key, key  # 3. said, before there is one
    w.shot("server-address-no-key-yet")
    w.press("push button", "Use this")

    # 1. the status while the server is down: waiting, retrying; drawn as said
    tree = _status_until(w, lambda s: "retrying in" in s, 120, "the app waiting for the server")
    status = _status(tree)["name"]
    assert "waiting for the server" in status and server.url in status.replace("\n", ""), status
    reads_well(status, "waiting for the server")
    w.shot("waiting-for-the-server")

    # 5. the server, started now: its stages printed before it was ready
    t0 = time.perf_counter()
    server.start(SERVE_START_S)
    print(f"voxcap serve ready in {time.perf_counter() - t0:.0f} s")
    printed = server.output()
    stages = re.findall(r"^ +\d+ s  (.+)$", printed, re.M)
    assert stages[0].startswith("importing") and stages[-1] == "ready", printed
    assert "loading weights…" in stages, printed
    assert printed.index("  ready\n") < printed.index(f"Ready: {server.url}"), printed

    # 2. picked up without a restart: the app's next try connects
    tree = _status_until(w, lambda s: s.startswith("Captions from"), 180,
                         "the app connecting to the server that came up")
    status = _status(tree)["name"]
    assert f"at {server.url}" in status and "Graph mode" not in status, status
    # 7. the meter: the server path's rows, none about a local GPU
    shown = _showing(tree)
    assert shown.get("Server", "").endswith(f"at {server.url}"), shown
    assert "Round trip p50 / p95" in shown, sorted(shown)
    assert not [t for t in LOCAL_ONLY if t in shown], [t for t in LOCAL_ONLY if t in shown]
    w.shot("connected")

    # F5: captions of the speech played into the sound server
    w.press("push button", "Start captioning")
    until(w.tree, lambda t: labels(t).get("Captioning state") == "Captioning", 60,
          "captioning on")
    wav = speech_wav(tmp_path_factory.mktemp("speech") / "them.wav", SPEECH_THEM)
    pulse.play(wav, wait=False).wait(60)
    until(w.tree, lambda t: "No captions yet" not in overlay(t), 180, "captions in the overlay")
    # the meter samples once a second: its first round trip can come after the first caption
    until(w.tree, lambda t: _showing(t).get("Round trip p50 / p95", "").endswith(" ms"), 30,
          "the meter's round trip")
    w.shot("captioning")

    # Settings: the key's source (3), then Share captions (6, 8)
    w.press("push button", "Settings…")
    tree = until(w.tree, lambda t: node(t, "page tab", "Share captions") is not None, 30,
                 "the Settings dialog")
    key = labels(tree)["Server API key"]
    assert key.startswith("key: this computer's server key, found in ") \
        and key.endswith("serve-api-key"), key
    w.press("page tab", "Share captions")
    w.press("check box", "Share captions via")
    tree = until(w.tree, lambda t: "Apply" in labels(t).get("Sharing status", ""), 20,
                 "the share panel saying what Apply does")
    assert labels(tree)["Sharing status"] == (
        "Not sharing. Sharing starts when you press Apply or OK."), labels(tree)
    w.shot("share-ticked")
    w.press("push button", "Apply")
    tree = until(w.tree, lambda t: labels(t).get("Sharing status", "").startswith("Sharing: 0"),
                 30, "sharing on")
    until(w.tree, lambda t: _showing(t).get("Caption sharing") == "Sharing: 0 viewers", 30,
          "the main window saying that captions are shared")
    # the address the panel shows (its label offers no text over AT-SPI: read off the port)
    url = f"http://127.0.0.1:{share_port}/"
    w.shot("sharing-on")
    w.press("push button", "OK")

    # 6. the feed's snapshot: captioning is on
    with urllib.request.urlopen(f"{url}events", timeout=30) as feed:
        first = next(raw for raw in feed if raw.startswith(b"data: "))
    snapshot = json.loads(first[6:])
    assert snapshot["type"] == "snapshot" and snapshot["state"] == "on", snapshot

    # the page in chromium: the captions, one viewer in the main window
    driver = browser.start_chromium()
    try:
        driver.get(url)
        pulse.play(wav, wait=False).wait(60)
        words = browser.wait_for(lambda: browser.caption_text(driver).strip(), 180,
                                 what="captions on the page")
        assert words, words
        until(w.tree, lambda t: _showing(t).get("Caption sharing") == "Sharing: 1 viewer", 30,
              "one viewer counted")
        driver.save_screenshot(str(w.shots / "page.png"))
        w.shot("sharing-one-viewer")
    finally:
        browser.quit_chromium(driver)

    w.press("push button", "Stop captioning")  # F5 again: stop
    until(w.tree, lambda t: labels(t).get("Captioning state") == "Not captioning", 60,
          "captioning off")
    w.press("menu item", "Quit")
