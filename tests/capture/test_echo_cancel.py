"""Echo-safe "Both", on PulseAudio and on PipeWire (both real servers).

The room is simulated (support/echo_path.py): what the speaker plays reaches the microphone at
-6 dB after ~50 ms, and a near talker speaks into the microphone. The issue's targets (echo
-20 dB, near talker within 3 dB) are the benchmark's (benchmarks/echo_cancel_bench.py); the
bounds here are looser. Measured with the benchmark: PulseAudio 16.1 23-40 dB of echo reduction
from run to run; PipeWire 0.3.65, whose canceller voxcap runs in its monitor form
(voxcap/capture/pw_echo.py), 77-82 dB (its sink form, which pipewire-pulse's module-echo-cancel
loads, gave 6-17 dB). Near talkers changed by about 1 dB on both.

On PipeWire there is no module to unload: the canceller is a ``pipewire`` child process whose
nodes go with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from support.capture_helpers import Recorder
from support.capture_helpers import wait_until as _wait
from support.echo_path import AcousticPath, measure
from support.pulse import speech_wav
from support.xcorr import match

from voxcap.capture import Capture, pw_echo
from voxcap.capture import echo as echo_mod
from voxcap.capture.sources import MIC, SourceSpec
from voxcap.events import CaptureDeviceChanged

MIN_REDUCTION_DB = {"pulseaudio": 15.0, "pipewire": 15.0}
MAX_NEAR_CHANGE_DB = 4.0


@pytest.fixture(scope="module")
def voices(tmp_path_factory):
    d = tmp_path_factory.mktemp("echo")
    return {
        "warmup": speech_wav(d / "warmup.wav",
                             "Good morning everyone, thank you for joining the call today."),
        "far": speech_wav(d / "far.wav", "The quarterly numbers are better than expected in every region."),
        "near": speech_wav(d / "near.wav", "Could you please repeat the last number, I did not hear it.",
                           rate=44100),
    }


def ec_modules(server) -> list[str]:
    return [line for line in server.pactl("list", "short", "modules").splitlines()
            if "module-echo-cancel" in line and echo_mod.PREFIX in line]


def notices(rec, reason):
    return [e for e in rec.events_of(CaptureDeviceChanged) if e.reason == reason]


@pytest.mark.slow
@pytest.mark.quiet  # seen in a parallel run: 9.6 dB beside the other worker's engines
def test_echo_removed_near_talker_kept(sound_server, voices, request):
    path = AcousticPath(sound_server).start()
    try:
        off = measure(sound_server, "off", [voices["warmup"]], voices["far"], voices["near"])
        on = measure(sound_server, "on", [voices["warmup"]], voices["far"], voices["near"])
    finally:
        path.stop()
    assert on.echo_active and not off.echo_active
    reduction = off.db(off.echo_rms) - on.db(on.echo_rms)
    near_change = on.db(on.near_rms) - off.db(off.near_rms)
    server = request.node.callspec.params["sound_server"]
    assert reduction >= MIN_REDUCTION_DB[server], (reduction, near_change, off, on)
    assert abs(near_change) <= MAX_NEAR_CHANGE_DB, (reduction, near_change, off, on)
    assert not ec_modules(sound_server)  # unloaded when the capture stopped


def _child(server, code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=server.env())


CHILD = """
import sys, time
from voxcap.capture.echo import EchoCanceller
ec = EchoCanceller("virtmic", "system", "on")
print(ec.start(), ec._reaper.pid if ec._reaper else 0, flush=True)
time.sleep(60)
"""


def test_module_unloaded_when_the_app_is_killed(sound_server, request):
    """SIGKILL leaves no chance to clean up: the reaper process unloads the module (PulseAudio);
    the canceller's process dies with voxcap, and its source with it (PipeWire)."""
    child = _child(sound_server, CHILD)
    source, _reaper = child.stdout.readline().split()
    assert source.startswith("voxcap_ec_mic_") and source in sound_server.sources()
    pipewire = request.node.callspec.params["sound_server"] == "pipewire"
    assert bool(ec_modules(sound_server)) != pipewire
    child.kill()
    child.wait()
    assert _wait(lambda: not ec_modules(sound_server) and source not in sound_server.sources()), \
        (ec_modules(sound_server), sound_server.sources())


def test_crash_leftover_cleaned_at_next_start(sound_server, request):
    """voxcap and its reaper both killed: the next echo canceller removes the leftover first,
    and its own module goes when captioning stops."""
    if request.node.callspec.params["sound_server"] == "pipewire":
        pytest.skip("no module and no reaper on PipeWire: the canceller's process dies with voxcap "
                    "(test_module_unloaded_when_the_app_is_killed)")
    child = _child(sound_server, CHILD)
    source, reaper = child.stdout.readline().split()
    os.kill(int(reaper), signal.SIGKILL)
    child.kill()
    child.wait()
    time.sleep(0.3)
    leftover = ec_modules(sound_server)
    assert len(leftover) == 1 and f"_{child.pid}_" in leftover[0]
    rec = Recorder()
    cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo="on"), rec.on_block,
                  rec.on_event).start()
    try:
        now = ec_modules(sound_server)
        assert len(now) == 1 and f"_{os.getpid()}_" in now[0], now
        assert source not in sound_server.sources()
    finally:
        cap.stop()
    assert not ec_modules(sound_server)


def test_no_echo_canceller_one_notice_and_the_mic_goes_on(sound_server, voices, monkeypatch):
    """A server without the module (here: asked for one it does not have) refuses it: one
    notice, and the microphone is captured as it is."""
    monkeypatch.setattr(echo_mod, "MODULE", "module-echo-cancel-not-installed")
    monkeypatch.setattr(pw_echo, "PW_MODULE", "libpipewire-module-echo-cancel-not-installed")
    rec = Recorder()
    cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo="on"), rec.on_block,
                  rec.on_event).start()
    try:
        assert cap.device.name == "virtmic"
        rec.wait_audio(0.3)
        start = rec.mark()
        sound_server.play(voices["near"], sink="micfeed")
        time.sleep(0.3)
    finally:
        cap.stop()
    assert len(notices(rec, "echo unavailable")) == 1, [e.message for e in rec.events]
    assert "no echo canceller" in notices(rec, "echo unavailable")[0].message
    from support.xcorr import load_16k, match_tracked

    # the microphone's own sound, every part in order; a starved sound server's slips forgiven
    # as in the echo tests (seen in a full run: a plain correlation of r 0.84, lag as expected)
    m = match_tracked(load_16k(voices["near"]), rec.audio(start))
    assert _same_sound(m), str(m)


@pytest.mark.parametrize("why", ["old PipeWire", "its canceller fails"])
def test_pipewire_without_the_monitor_form_uses_the_sink_form_and_says_it_is_weak(pipewire_server, why,
                                                                                   monkeypatch):
    """PipeWire older than 0.3.60 (no monitor form), or PipeWire's own canceller not starting:
    the sink form pipewire-pulse loads, with one notice that says it is weak and what to do."""
    pipewire_server.reset()
    pipewire_server.apply_env()
    try:
        if why == "old PipeWire":
            monkeypatch.setattr(echo_mod, "MONITOR_MODE_SINCE", (99, 0, 0))
        else:
            monkeypatch.setattr(pw_echo, "PW_MODULE", "libpipewire-module-echo-cancel-not-installed")
        rec = Recorder()
        cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo="on"), rec.on_block,
                      rec.on_event).start()
        try:
            assert cap.device.name.startswith("voxcap_ec_mic_") and ec_modules(pipewire_server)
        finally:
            cap.stop()
        assert not ec_modules(pipewire_server)
        (on,) = notices(rec, "echo on")
        assert not notices(rec, "echo unavailable")
        if why == "old PipeWire":
            assert "this PipeWire (0.3." in on.message and "update PipeWire to 99.0.0" in on.message
        else:
            assert "weak here" in on.message and "not-installed" in on.message, on.message
            assert "headphones" in on.message
    finally:
        pipewire_server.restore_env()
        from support.pulse import reinit_portaudio

        reinit_portaudio()


def test_auto_is_off_on_headphones(sound_server):
    sound_server.pactl("load-module", "module-null-sink", "sink_name=phones", "norewinds=1",
                       "sink_properties=device.form_factor=headphone")
    try:
        assert _wait(lambda: "phones" in sound_server.pactl("list", "short", "sinks"))
        assert _wait(lambda: sound_server.pactl("set-default-sink", "phones", check=False) is not None
                     and "Default Sink: phones" in sound_server.pactl("info"))
        rec = Recorder()
        cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo="auto"), rec.on_block,
                      rec.on_event).start()
        try:
            assert cap.device.name == "virtmic" and not ec_modules(sound_server)
        finally:
            cap.stop()
        off = notices(rec, "echo off")
        assert len(off) == 1 and "headphones" in off[0].message
    finally:
        sound_server.set_default_sink("vspeaker")
        idx = sound_server._module_index("sink_name=phones")
        if idx is not None:
            sound_server.pactl("unload-module", str(idx))


@pytest.mark.quiet  # seen in a parallel run: r 0.47 beside the other worker's engines
def test_both_with_an_app_keeps_its_sound_and_cancels_its_echo(sound_server, voices, request,
                                                                tmp_path):
    """"both:Far": on PulseAudio the app's stream goes through the canceller's reference output
    (it is moved there, which ends the monitor recording: the app capture must pick it up
    again); on PipeWire it stays where it plays (the canceller listens to the output's monitor).
    "Them" still gets exactly the app's sound; everything is put back when captioning stops."""
    pipewire = request.node.callspec.params["sound_server"] == "pipewire"
    from voxcap.capture.sources import parse_sources

    # The app's stream starts 0.7 s before its speech, as a call's does: what plays before the
    # recording is attached (and, on PulseAudio, re-attached after the move) is not speech.
    far = tmp_path / "far-padded.wav"
    subprocess.run(["sox", str(voices["far"]), str(far), "pad", "0.7", "0"], check=True, timeout=60)
    them_spec, you_spec = parse_sources("both:Far", echo="on")
    them, you = Recorder(), Recorder()
    cap_them = Capture(them_spec, them.on_block, them.on_event).start()
    cap_you = Capture(you_spec, you.on_block, you.on_event).start()
    try:
        assert cap_you.device.name.startswith("voxcap_ec_mic_")
        them.wait_audio(0.3)
        player = subprocess.Popen(["paplay", f"--server={sound_server.server}", "--device=vspeaker",
                                   "--client-name=Far", str(far)], env=sound_server.env())
        expected = "vspeaker" if pipewire else "voxcap_ec_out"
        assert _wait(lambda: expected in _sink_of(sound_server, "Far"), 5.0), \
            sound_server.pactl("list", "sink-inputs")
        if pipewire:  # and it is not moved later
            time.sleep(0.5)
            assert _sink_of(sound_server, "Far") == "vspeaker"
        player.wait(30)
        time.sleep(0.5)
    finally:
        cap_you.stop()
        them_stats = cap_them.stop()
    from support.xcorr import load_16k, match_tracked

    # From 0.5 s in: all of the speech, window by window. A sound server short of CPU skips a
    # graph cycle now and then, and the app's audio it carried never reaches the recording:
    # "Them" slips by 5-32 ms there, and one slip in the middle halves the plain correlation
    # (PipeWire in CI: r 0.53, gain 0.53). Each part must still be the app's sound, in order, nothing
    # repeated, at most 0.1 s missing in all; and voxcap itself must lose nothing.
    ref, got = load_16k(far)[8000:], them.audio()
    m = match_tracked(ref, got)
    assert _same_sound(m), (str(m), match(ref, got))
    assert them_stats.dropped_blocks == 0 and them_stats.interruptions == 0, them_stats
    assert abs(them_stats.seconds_seen - them_stats.seconds_delivered) < 0.02, them_stats  # all of it
    assert not ec_modules(sound_server)
    (on,) = notices(you, "echo on")  # says what it removes: the app's sound (on PipeWire: all)
    assert "Far" in on.message and ("all of it" in on.message) == pipewire, on.message


def _same_sound(m) -> bool:
    """A ``match_tracked`` result that says "the reference's sound": every part of it, in order,
    at most 0.1 s (16 kHz samples) of it missing in slips of the server's."""
    return m.r >= 0.9 and m.lost <= 1600


def test_the_comparison_forgives_a_server_slip_and_nothing_else(voices):
    """What ``_same_sound`` takes for the app's sound (no sound server: the reference's own
    speech, cut about): a few ms skipped as a starved server skips them passes, where the plain
    correlation fails; audio missing, repeated, cut short or foreign fails."""
    import numpy as np
    from support.xcorr import load_16k, match_tracked

    ref = load_16k(voices["far"])
    got = np.concatenate([np.zeros(12000, np.float32), ref, np.zeros(8000, np.float32)])
    mid = 12000 + ref.size // 2

    def cut(*args):  # ([audio,] at, n): n samples gone at ``at`` (n < 0: -n of silence put there)
        audio, at, n = args if len(args) == 3 else (got, *args)
        return np.concatenate([audio[:at], audio[at + n:]]) if n > 0 else \
            np.concatenate([audio[:at], np.zeros(-n, np.float32), audio[at:]])

    assert _same_sound(match_tracked(ref, got))
    once = cut(mid, 171)  # 512 frames at 48 kHz: one slip
    twice = cut(cut(mid - 8000, 85), mid, 256)  # 256 frames, then 768 further on
    for slipped, lost in ((cut(mid, 85), 85), (once, 171), (twice, 341)):
        m = match_tracked(ref, slipped)
        assert _same_sound(m) and m.lost == lost, (lost, str(m))
        assert match(ref, slipped).r < 0.9  # what failed in CI
    repeated = np.concatenate([got[:mid], got[mid - 320: mid], got[mid:]])
    noise = np.random.default_rng(0).normal(0, float(np.std(ref)), got.size).astype(np.float32)
    for what, audio in (("100 ms missing", cut(mid, 1600)), ("100 ms of silence", cut(mid, -1600)),
                        ("20 ms repeated", repeated),
                        ("the last quarter missing", got[: 12000 + 3 * ref.size // 4]),
                        ("5 ms missing 20 times", _cut_often(got, 12000, ref.size, 85, 20)),
                        ("other sound", noise), ("silence", np.zeros_like(got))):
        m = match_tracked(ref, audio)
        assert not _same_sound(m), (what, str(m))


def _cut_often(audio, start, length, n, times):
    """``audio`` with ``n`` samples taken out ``times`` times, evenly over [start, start+length)."""
    import numpy as np

    keep = np.ones(audio.size, bool)
    for k in range(times):
        at = start + (k + 1) * length // (times + 1)
        keep[at: at + n] = False
    return audio[keep]


def _sink_of(server, app: str) -> str:
    """The name of the sink the app's stream plays on ("" if none)."""
    sinks = {line.split("\t")[0]: line.split("\t")[1]
             for line in server.pactl("list", "short", "sinks").splitlines()}
    for block in server.pactl("list", "sink-inputs").split("Sink Input #")[1:]:
        if f'application.name = "{app}"' in block:
            for line in block.splitlines():
                if line.strip().startswith("Sink:"):
                    return sinks.get(line.split(":", 1)[1].strip(), "")
    return ""


def test_output_unplugged_the_canceller_follows_the_output_left_and_the_microphone_goes_on(
        sound_server, voices):
    """The output the canceller listens to goes away (the server unloads the canceller with it;
    PipeWire's stops when its reference stream loses its target) while another stays: the
    canceller is built again for that one (test_echo_rebuild.py: for the same output when it
    returns, and after a restart of the server), and the microphone's sound goes on."""
    sound_server.pactl("load-module", "module-null-sink", "sink_name=spare", "norewinds=1",
                       "sink_properties=device.description=Spare")
    rec = Recorder()
    cap = Capture(SourceSpec(MIC, label="You", echo_ref="system", echo="on"), rec.on_block,
                  rec.on_event).start()
    try:
        source = cap.device.name
        assert source.startswith("voxcap_ec_mic_")
        rec.wait_audio(0.3)
        sound_server.unload_sink("vspeaker")
        assert _wait(lambda: source not in sound_server.sources()), sound_server.sources()
        sound_server.set_default_sink("spare")  # the output the sound now plays on
        assert _wait(lambda: any("'Spare'" in e.message for e in notices(rec, "echo on")), 15.0), \
            [e.message for e in rec.events_of(CaptureDeviceChanged)]
        assert _wait(lambda: cap.device is not None and cap.device.name.startswith("voxcap_ec_mic_")
                     and cap.device.name in sound_server.sources(), 10.0), cap.device
        start = rec.mark()
        sound_server.play(voices["near"], sink="micfeed")
        time.sleep(0.4)
    finally:
        cap.stop()
        idx = sound_server._module_index("sink_name=spare")
        if idx is not None:
            sound_server.pactl("unload-module", str(idx))
    from support.xcorr import load_16k, match_tracked

    # the microphone's own sound, every part in order, slips forgiven (as the test above)
    m = match_tracked(load_16k(voices["near"]), rec.audio(start))
    assert _same_sound(m), str(m)
