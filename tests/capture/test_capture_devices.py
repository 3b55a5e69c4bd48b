"""Listing devices by the names people know, choosing them by name, and the bad inputs: a name
that does not exist, and no sound server at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.capture_helpers import Recorder

from voxcap.capture import Capture, list_devices, server_state
from voxcap.capture.sources import find_device, parse_sources
from voxcap.cli import main
from voxcap.errors import CaptureError


def test_list_devices_shows_descriptions_defaults_and_monitors(pulse):
    devices = {d.description: d for d in list_devices()}
    assert set(devices) == {"Monitor of Virtual Speaker", "Monitor of Mic Feed", "Virtual Microphone"}
    speaker = devices["Monitor of Virtual Speaker"]
    assert speaker.kind == "monitor" and speaker.is_default and speaker.monitor_of == "Virtual Speaker"
    assert speaker.name == "vspeaker.monitor" and speaker.rate == 48000 and speaker.channels == 2
    assert not devices["Monitor of Mic Feed"].is_default
    mic = devices["Virtual Microphone"]
    assert mic.kind == "input" and mic.is_default and mic.monitor_of == ""


def test_defaults_follow_the_server(pulse):
    pulse.set_default_sink("micfeed")
    state = server_state()
    assert state.system_device().name == "micfeed.monitor"
    pulse.set_default_source("virtmic")
    assert server_state().mic_device().name == "virtmic"


def test_devices_command_text_and_json(pulse, capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "* Monitor of Virtual Speaker" in out and "<- --source system" in out
    assert "* Virtual Microphone" in out and "<- --source mic" in out
    assert main(["devices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_name = {d["name"]: d for d in data["devices"]}
    assert by_name["vspeaker.monitor"]["description"] == "Monitor of Virtual Speaker"
    assert by_name["vspeaker.monitor"]["kind"] == "monitor" and by_name["vspeaker.monitor"]["is_default"]
    assert by_name["virtmic"]["kind"] == "input"
    assert data["default_output"] == "vspeaker"


@pytest.mark.parametrize("name, expected", [
    ("Monitor of Virtual Speaker", "vspeaker.monitor"),  # the description
    ("monitor of virtual speaker", "vspeaker.monitor"),  # any case
    ("virtmic", "virtmic"),  # the server's name
    ("Virtual Speaker", "vspeaker.monitor"),  # an output device: what it plays
    ("Microphone", "virtmic"),  # a unique part of a description
])
def test_device_names_resolve(pulse, name, expected):
    assert find_device(name, server_state()).name == expected


def test_ambiguous_partial_name_is_an_error_listing_the_matches(pulse):
    with pytest.raises(CaptureError) as err:
        find_device("Monitor", server_state())
    assert "Monitor of Virtual Speaker" in err.value.message and "Monitor of Mic Feed" in err.value.message


def test_sources_by_name():
    assert [(s.kind, s.label) for s in parse_sources("both")] == [("system", "Them"), ("mic", "You")]
    assert parse_sources("Microphone")[0].kind == "mic"
    assert parse_sources("USB Headset")[0].kind == "device"
    with pytest.raises(CaptureError):
        parse_sources("  ")


def test_unknown_device_is_a_clear_error_listing_what_exists(pulse):
    rec = Recorder()
    with pytest.raises(CaptureError) as err:
        Capture("Blue Yeti", rec.on_block, rec.on_event).start()
    msg = err.value.message
    assert "'Blue Yeti'" in msg
    for d in ("Monitor of Virtual Speaker", "Monitor of Mic Feed", "Virtual Microphone"):
        assert d in msg
    assert "voxcap devices" in err.value.fix
    assert not rec.blocks and not rec.events


def _cli(args, env, timeout=30):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True, text=True,
                       env=env, timeout=timeout, check=False)
    return r, time.monotonic() - t0


def test_unknown_device_cli_fails_before_starting_the_engine(pulse, tiny_weights_dir):
    r, took = _cli(["live", "--source", "Blue Yeti", "--model", str(tiny_weights_dir)],
                   pulse.env())
    assert r.returncode == 2
    assert "error: No capture device called 'Blue Yeti'" in r.stderr
    assert "Virtual Microphone" in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr and "engine:" not in r.stderr
    assert took < 20


@pytest.fixture
def no_server_env(tmp_path, monkeypatch):
    """PULSE_SERVER pointing at a socket nobody listens on (as when no sound server runs)."""
    dead = f"unix:{tmp_path}/no-such-server"
    monkeypatch.setenv("PULSE_SERVER", dead)
    env = dict(os.environ)
    return env


def test_no_sound_server_capture_error(no_server_env):
    t0 = time.monotonic()
    with pytest.raises(CaptureError) as err:
        Capture("system", lambda b: None).start()
    assert time.monotonic() - t0 < 5
    assert "No sound server" in err.value.message
    assert "pipewire-pulse" in err.value.fix


@pytest.mark.parametrize("args", [["devices"], ["live", "--source", "system", "--model", "{model}"]])
def test_no_sound_server_cli(no_server_env, tiny_model_dir, args):
    args = [a.replace("{model}", str(tiny_model_dir)) for a in args]
    r, took = _cli(args, no_server_env)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith("error: No sound server is running"), r.stderr
    assert lines[1].startswith("  fix: start the sound server")
    assert len(lines) == 2 and "Traceback" not in r.stderr
    assert took < 20  # no hang (most of it is Python importing voxcap)


def test_device_watcher_reports_changes_and_the_server_going_away(pulse):
    from voxcap.capture import DeviceWatcher
    from voxcap.events import DevicesChanged

    rec = Recorder()
    watcher = DeviceWatcher(rec.on_event, retry_s=0.2).start()
    try:
        first = rec.wait_event(DevicesChanged)
        assert len(first.devices) == 3 and first.server_up

        def latest_names(timeout=5.0, **fields):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                evs = rec.events_of(DevicesChanged, **fields)
                if evs:
                    yield {d.name for d in evs[-1].devices}
                time.sleep(0.05)

        pulse.unload_sink("vspeaker")
        assert any(names == {"micfeed.monitor", "virtmic"} for names in latest_names())
        pulse.load_sink("vspeaker")
        assert any("vspeaker.monitor" in names for names in latest_names())
        pulse.kill()
        rec.wait_event(DevicesChanged, server_up=False)
        # counted before the restart: the watcher may be back before restart() returns (seen in
        # a parallel run: counted after, the event was already in, and none came after it)
        n = len(rec.events_of(DevicesChanged, server_up=True))
        pulse.restart()
        deadline = time.monotonic() + 20
        while len(rec.events_of(DevicesChanged, server_up=True)) == n:
            assert time.monotonic() < deadline, "no DevicesChanged after the server came back"
            time.sleep(0.05)
    finally:
        watcher.stop()
