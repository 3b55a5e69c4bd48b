"""One application's sound, and only its sound, on PulseAudio and on PipeWire (both real).

Two "applications" (paplay with different client names) play different sentences on the same
virtual speaker; capturing one must give its sentence (correlation r >= 0.9 with what it played,
as the capture tests measure 0.99+ on the lossless path) and not the other's (|r| < 0.3:
unrelated speech gives < 0.05, the mixed speaker monitor would give ~0.7 for both).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time

import pytest
from support.capture_helpers import Recorder
from support.pulse import speech_wav
from support.xcorr import load_16k, match

from voxcap.capture import Capture
from voxcap.cli import main
from voxcap.events import CaptureDeviceChanged

MIN_R, MAX_OTHER_R = 0.9, 0.3


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("apps")
    out = {}
    for key, text in {"a1": "Seven green apples fell from the tall tree near the river.",
                      "a2": "The train to the northern mountains leaves at half past nine.",
                      "b": "Music plays in another tab while somebody talks about the weather "
                           "and the long weekend ahead."}.items():
        raw = speech_wav(d / f"{key}-speech.wav", text)
        path = d / f"{key}.wav"  # a stream starts before its speech, as a call's or a video's does
        subprocess.run(["sox", str(raw), str(path), "pad", "0.7", "0"], check=True, timeout=60)
        out[key] = (path, load_16k(path))
    return out


def play(server, wav, app: str) -> subprocess.Popen:
    return subprocess.Popen(["paplay", f"--server={server.server}", "--device=vspeaker",
                             f"--client-name={app}", str(wav)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=server.env())


def notices(rec, reason):
    return [e for e in rec.events_of(CaptureDeviceChanged) if e.reason == reason]


def wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def test_only_the_chosen_app_is_captured(sound_server, clips):
    rec = Recorder()
    cap = Capture("app:PlayerA", rec.on_block, rec.on_event).start()
    try:
        assert notices(rec, "waiting"), rec.events  # not playing yet: says it waits
        rec.wait_audio(0.5)  # silence flows meanwhile (the engine's stream keeps moving)
        other = play(sound_server, clips["b"][0], "PlayerB")
        time.sleep(0.3)
        chosen = play(sound_server, clips["a1"][0], "PlayerA")
        chosen.wait(30)
        other.wait(30)
        start = rec.mark()
        rec.wait_audio(0.5, since=start)
    finally:
        stats = cap.stop()
    audio = rec.audio()
    a, b = match(clips["a1"][1], audio), match(clips["b"][1], audio)
    assert a.r >= MIN_R, (a, b)
    assert abs(b.r) < MAX_OTHER_R, (a, b)
    assert 0.7 < a.gain < 1.3, a
    assert notices(rec, "playing"), rec.events
    assert stats.dropped_blocks == 0 and stats.interruptions == 0


def test_follows_the_app_across_stream_restarts(sound_server, clips):
    """The app ends its stream and opens a new one (a new index), and later quits and comes
    back: both sentences are captured, with one "waiting" notice in between."""
    rec = Recorder()
    cap = Capture("app:PlayerA", rec.on_block, rec.on_event).start()
    try:
        rec.wait_audio(0.5)
        first = play(sound_server, clips["a1"][0], "PlayerA")
        first.wait(30)
        wait_for(lambda: len(notices(rec, "waiting")) >= 2)  # before it + after it
        other = play(sound_server, clips["b"][0], "PlayerB")
        second = play(sound_server, clips["a2"][0], "PlayerA")
        second.wait(30)
        other.wait(30)
        start = rec.mark()
        rec.wait_audio(0.5, since=start)
    finally:
        stats = cap.stop()
    audio = rec.audio()
    assert stats.dropped_blocks == 0 and stats.interruptions == 0, stats
    for key in ("a1", "a2"):
        m = match(clips[key][1], audio)
        assert m.r >= MIN_R, (key, m)
    assert abs(match(clips["b"][1], audio).r) < MAX_OTHER_R
    assert len(notices(rec, "playing")) == 2, [e.message for e in rec.events]


def test_devices_lists_playing_apps(sound_server, clips, capsys):
    player = play(sound_server, clips["b"][0], "PlayerB")
    try:
        time.sleep(0.5)
        assert main(["devices", "--json"]) == 0
        out = capsys.readouterr().out
        assert main(["devices"]) == 0
        text = capsys.readouterr().out
    finally:
        player.kill()
        player.wait()
    apps = json.loads(out)["apps"]
    b = next(a for a in apps if a["name"] == "PlayerB")
    assert b["media"].endswith("b.wav") and b["playing"]  # PulseAudio: the path; PipeWire: the name
    assert "PlayerB — " in text and "b.wav" in text and "[app:PlayerB]" in text


def test_source_names_for_apps_and_pairs():
    from voxcap.capture.sources import APP, MIC, SYSTEM, parse_sources
    from voxcap.errors import CaptureError

    [app] = parse_sources("app:Zoom")
    assert (app.kind, app.name, app.label, str(app)) == (APP, "Zoom", "Zoom", "app:Zoom")
    them, you = parse_sources("both:Zoom", echo="on")
    assert (them.kind, them.label, you.kind, you.label) == (APP, "Them", MIC, "You")
    assert (you.echo_ref, you.echo) == ("app:Zoom", "on")
    sys_them, sys_you = parse_sources("both")
    assert sys_them.kind == SYSTEM and (sys_you.echo_ref, sys_you.echo) == ("system", "auto")
    with pytest.raises(CaptureError, match="No application named"):
        parse_sources("app:  ")
    with pytest.raises(CaptureError, match="Echo cancellation must be"):
        parse_sources("both", echo="loud")


def test_a_playing_app_by_plain_name_and_an_unknown_name(sound_server, clips):
    """--source "PlayerB" (no device of that name) means the application while it plays; a name
    that is neither says so, listing the devices."""
    from voxcap.capture import server_state
    from voxcap.capture.sources import APP, parse_sources, resolve_initial
    from voxcap.errors import CaptureError

    player = play(sound_server, clips["b"][0], "PlayerB")
    try:
        wait_for(lambda: "PlayerB" in sound_server.pactl("list", "sink-inputs"))
        spec, dev = resolve_initial(parse_sources("playerb")[0], server_state())
        assert (spec.kind, spec.name, dev.description) == (APP, "PlayerB", "PlayerB (application)")
        with pytest.raises(CaptureError, match="no application of that name"):
            resolve_initial(parse_sources("Nobody Plays This")[0], server_state())
    finally:
        player.kill()
        player.wait()


def test_no_recorder_program_is_one_clear_error(sound_server, monkeypatch, tmp_path):
    """Without ``parec`` (pulseaudio-utils) an application cannot be recorded: the capture
    refuses to start with the package to install, instead of capturing nothing."""
    from voxcap.errors import CaptureError

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing to run here
    with pytest.raises(CaptureError) as err:
        Capture("app:PlayerA", lambda b: None, lambda e: None).start()
    assert "`parec` program is missing" in err.value.message
    assert "pulseaudio-utils" in err.value.fix


@pytest.mark.slow
def test_an_app_that_cannot_be_recorded_is_one_notice_then_recovers(sound_server, clips, monkeypatch,
                                                                      tmp_path, caplog):
    """The server refuses to record the app's stream (here: the recorder is pointed at a server
    that is not there, as a sandbox without the permission to record refuses it): one notice
    naming the app, the error and what to do; silence keeps the stream going; once recording
    works again, still during the same stream, the notice is replaced and the app's sound is
    captured."""
    caplog.set_level(logging.DEBUG, logger="voxcap.capture")  # a failure shows each recorder's start and end
    good = sound_server.server
    long_clip = tmp_path / "long.wav"  # one stream that outlasts the failures and the recovery
    subprocess.run(["sox", str(clips["b"][0]), str(clips["b"][0]), str(long_clip)], check=True, timeout=60)
    rec = Recorder()
    cap = Capture("app:PlayerA", rec.on_block, rec.on_event).start()  # its own connection made in start()
    assert cap._server is not None  # so the bad address below is parec's alone
    try:
        monkeypatch.setenv("PULSE_SERVER", "unix:/nonexistent/voxcap-test/native")  # parec's only
        player = play(sound_server, long_clip, "PlayerA")
        rec.wait_event(CaptureDeviceChanged, timeout=10, reason="failing")
        failing = notices(rec, "failing")
        assert len(failing) == 1, [e.message for e in rec.events_of(CaptureDeviceChanged)]
        assert "cannot record PlayerA's sound" in failing[0].message
        assert "restart PlayerA" in failing[0].message and "system audio" in failing[0].message
        start = rec.mark()
        rec.wait_audio(0.3, since=start)  # the stream goes on (silence) while it cannot record
        monkeypatch.setenv("PULSE_SERVER", good)
        wait_for(lambda: _after(rec, "failing") == ["playing"], 6.0)  # same stream: no "waiting"
        assert player.poll() is None  # recovered while the app still played
        player.kill()
        player.wait(30)
        wait_for(lambda: _after(rec, "failing")[-1:] == ["waiting"], 10.0)
        start = rec.mark()
        chosen = play(sound_server, clips["a1"][0], "PlayerA")
        wait_for(lambda: _after(rec, "failing")[-1:] == ["playing"], 10.0)  # its new stream is recorded
        chosen.wait(30)
        rec.wait_audio(1.0, since=rec.mark())  # its recording's tail delivered, however loaded
    finally:
        cap.stop()
    m = match(clips["a1"][1][int(0.7 * 16000):], rec.audio(start))  # its speech (the pad is silence)
    assert m.r >= MIN_R, f"{m}; events: " + " | ".join(getattr(e, "message", repr(e)) for e in rec.events)
    assert len(notices(rec, "failing")) == 1


def _after(rec, reason: str) -> list[str]:
    """The reasons of the notices after the first ``reason`` one."""
    changes = [e.reason for e in rec.events_of(CaptureDeviceChanged)]
    return changes[changes.index(reason) + 1:] if reason in changes else []


SLOW_PAREC = """#!/bin/sh
# the real parec, started late while {flag} exists, as on a loaded machine
[ -e {flag} ] && sleep {delay}
exec {parec} "$@"
"""


def test_a_recording_slow_to_start_does_not_interrupt_the_capture(sound_server, clips, tmp_path,
                                                                 monkeypatch):
    """The app starts its next stream right after the last one, and the recording of it (parec)
    is slow to start, as on a loaded machine: silence fills the wait (the app capture's
    ``stuck_s``) before the capture's watchdog would call the stream stalled and reopen it,
    which lost the start of what the app played (and said "audio stopped"). With the default
    ``stall_s`` (2.0 s) and ``stuck_s`` equal to it, the watchdog came first in 5 of 6 runs of a
    parec 2.3 s late; ``stall_s`` 1.0 here makes it certain with the old ``stuck_s``."""
    import shutil

    flag = tmp_path / "slow"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "parec").write_text(SLOW_PAREC.format(flag=flag, delay=1.6, parec=shutil.which("parec")))
    (shim / "parec").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    rec = Recorder()
    cap = Capture("app:PlayerA", rec.on_block, rec.on_event, stall_s=1.0).start()
    try:
        rec.wait_audio(0.3)
        play(sound_server, clips["a1"][0], "PlayerA").wait(30)
        flag.touch()
        play(sound_server, clips["a2"][0], "PlayerA").wait(30)
        start = rec.mark()
        rec.wait_audio(0.3, since=start)
    finally:
        stats = cap.stop()
    assert stats.interruptions == 0 and stats.dropped_blocks == 0, \
        [e.message for e in rec.events if hasattr(e, "message")]
    # what the recording got, once started, is the app's sound (its first 1.6 s never reached it)
    late = clips["a2"][1][int(2.2 * 16000):]
    assert match(late, rec.audio()).r >= MIN_R


def test_a_slow_look_at_the_servers_streams_does_not_interrupt_the_capture(sound_server, clips,
                                                                           monkeypatch):
    """The app's next stream appears while the machine is loaded: the follower's look at the
    server's streams (and parec's start) takes 1.6 s. Silence keeps the capture going meanwhile
    (its own thread), so the watchdog does not call it stalled and reopen it: a reopen lost the
    start of what the app played, and the recording's burst queued for nobody (a full run's
    "1 interruption, 55 blocks dropped")."""
    from voxcap.capture import app_stream

    real_find, slow = app_stream.find_app, {"now": False, "done": False}

    def find_app(name, apps):
        found = real_find(name, apps)
        if slow["now"] and not slow["done"] and found is not None and found.best_stream():
            slow["done"] = True
            time.sleep(1.6)
        return found

    monkeypatch.setattr(app_stream, "find_app", find_app)
    rec = Recorder()
    cap = Capture("app:PlayerA", rec.on_block, rec.on_event, stall_s=1.0).start()
    try:
        rec.wait_audio(0.3)
        play(sound_server, clips["a1"][0], "PlayerA").wait(30)
        wait_for(lambda: len(notices(rec, "waiting")) >= 2)
        slow["now"] = True
        play(sound_server, clips["a2"][0], "PlayerA").wait(30)
        start = rec.mark()
        rec.wait_audio(0.3, since=start)
    finally:
        stats = cap.stop()
    assert slow["done"]
    assert stats.interruptions == 0 and stats.dropped_blocks == 0, \
        [e.message for e in rec.events if hasattr(e, "message")]
    assert match(clips["a2"][1][int(2.2 * 16000):], rec.audio()).r >= MIN_R


def test_a_follower_stuck_for_good_is_left_to_the_watchdog(sound_server, monkeypatch):
    """Silence fills only while the follower still turns: one stuck for ``hung_s`` stops it, so
    the capture's watchdog sees a stream that delivers nothing and reopens it."""
    import queue

    from voxcap.capture import app_stream

    stuck = {"now": False}
    real_find = app_stream.find_app

    def find_app(name, apps):
        while stuck["now"]:
            time.sleep(0.05)
        return real_find(name, apps)

    monkeypatch.setattr(app_stream, "find_app", find_app)
    out: queue.Queue = queue.Queue()
    stream = app_stream.AppRawStream("PlayerA", out, 0, hung_s=0.5).open()
    try:
        wait_for(lambda: stream.callbacks > 0)  # silence while it waits for the app
        stuck["now"] = True
        stream._dirty = True  # the follower's next turn gets stuck
        time.sleep(2.0)
        assert stream.silent_for(time.monotonic()) > 1.0, stream.silent_for(time.monotonic())
    finally:
        stuck["now"] = False
        stream.close()
