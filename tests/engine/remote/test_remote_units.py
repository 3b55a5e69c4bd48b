"""Remote engine pieces that need no server: settings, URLs, the API key file, the audio
bookkeeping (replay, bounds, spans across sessions), error explanations."""

from __future__ import annotations

import os
import socket
import stat

import numpy as np
import pytest

from voxcap.engine.remote.audio import StreamAudio, to_pcm16
from voxcap.engine.remote.settings import (
    RemoteSettings,
    api_key_from_env,
    display_url,
    load_api_key,
    models_url,
    normalize_url,
    realtime_url,
    save_api_key,
)
from voxcap.errors import ConfigError

STEP = 1280


def pcm(n: int, start: int = 0) -> np.ndarray:
    """Samples whose values are their stream positions (mod 30000): checkable after replay."""
    return (np.arange(start, start + n) % 30000).astype("<i2")


# ------------------------------------------------------------------ settings ----
def test_urls():
    assert normalize_url("http://h:8000") == "ws://h:8000"
    assert normalize_url("https://h") == "wss://h"
    assert realtime_url("ws://h:8000") == "ws://h:8000/v1/realtime"
    assert realtime_url("ws://h:8000/") == "ws://h:8000/v1/realtime"
    assert realtime_url("wss://h/asr/v1/realtime") == "wss://h/asr/v1/realtime"
    assert realtime_url("wss://h/asr") == "wss://h/asr/v1/realtime"
    assert models_url("wss://h/asr") == "https://h/asr/v1/models"
    assert models_url("ws://h:1/v1/realtime") == "http://h:1/v1/models"
    assert display_url("ws://user:pw@h:8000/x?token=abc") == "ws://h:8000/x"


@pytest.mark.parametrize("url", ["", "gpu-box:8000", "ftp://h", "ws://", "ws://h:99999"])
def test_bad_urls_are_config_errors(url):
    with pytest.raises(ConfigError) as e:
        RemoteSettings(url, "m").validated()
    assert e.value.fix


def test_settings_validation_and_repr_hide_key():
    s = RemoteSettings("ws://h:1", " m ", api_key="k-123-secret").validated()
    assert s.server_model == "m" and "k-123-secret" not in repr(s)
    assert RemoteSettings("ws://h:1", "").validated().server_model == ""  # the server's only model
    with pytest.raises(ConfigError):
        RemoteSettings("ws://h:1", "m", max_buffer_s=0.1).validated()
    with pytest.raises(ConfigError):
        RemoteSettings("ws://h:1", "m", delay_ms=500).validated()


def test_api_key_file_owner_only(tmp_path):
    p = save_api_key(tmp_path / "conf" / "api-key", "sk-abc\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert load_api_key(p) == "sk-abc"
    os.chmod(p, 0o644)
    with pytest.raises(ConfigError) as e:
        load_api_key(p)
    assert "chmod 600" in e.value.fix and "sk-abc" not in str(e.value)
    save_api_key(p, "sk-new")  # rewriting narrows the mode again
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file to another user")
def test_api_key_file_of_another_user_is_refused(tmp_path):
    """A key file another user owns (and could change, e.g. to their server's key) is not used,
    whatever its mode."""
    p = save_api_key(tmp_path / "api-key", "sk-theirs")
    os.chown(p, 65534, 65534)
    with pytest.raises(ConfigError) as e:
        load_api_key(p)
    assert e.value.message == f"The API key file {p} belongs to another user (uid 65534)."
    assert e.value.fix == ("use a key file of your own: copy the key into one (chmod 600), or "
                           "use --api-key-env VAR")


def test_api_key_from_env(monkeypatch):
    monkeypatch.setenv("VOXCAP_TEST_KEY", " k1 ")
    assert api_key_from_env("VOXCAP_TEST_KEY") == "k1"
    assert api_key_from_env(None) is None
    monkeypatch.delenv("VOXCAP_TEST_KEY")
    with pytest.raises(ConfigError):
        api_key_from_env("VOXCAP_TEST_KEY")


def test_to_pcm16_clips():
    out = to_pcm16(np.array([0.0, 0.5, 1.0, 2.0, -3.0], np.float32))
    assert out.dtype == np.dtype("<i2") and list(out) == [0, 16384, 32767, 32767, -32767]


# ------------------------------------------------------------------ audio book ----
def test_spans_follow_stream_time_across_sessions():
    a = StreamAudio(STEP)
    a.push(pcm(10 * STEP))
    sent = a.take(10 * STEP)
    assert np.array_equal(sent, pcm(10 * STEP))
    spans = [a.on_token() for _ in range(4)]
    assert spans[0] == (0, STEP) and spans[3] == (3 * STEP, 4 * STEP)
    assert a.end_session() == 0  # a continuation loses nothing
    replay = a.take(100 * STEP)
    assert np.array_equal(replay, pcm(6 * STEP, 4 * STEP))  # from the first uncovered frame
    assert a.on_token() == (4 * STEP, 5 * STEP)


def test_partial_block_replay_and_flush_clamp():
    a = StreamAudio(STEP)
    a.push(pcm(3000))
    a.take(3000)
    assert a.on_token() == (0, STEP)
    a.end_session()
    replay = a.take(10_000)
    assert replay.size == 3000 - STEP and replay[0] == STEP
    assert a.on_token() == (STEP, 2 * STEP)
    assert a.on_token() == (2 * STEP, 3000)  # past the audio: clamped to its end
    assert a.on_token() == (3000, 3000)
    assert a.covered() and a.held == 0


def test_bound_drops_oldest_unsent_and_reports():
    a = StreamAudio(STEP, max_samples=5 * STEP, hysteresis=0)
    a.push(pcm(8 * STEP))
    assert a.held == 5 * STEP
    assert a.take_lost() == [(0, 3 * STEP)] and a.lost_total == 3 * STEP
    out = a.take(100 * STEP)
    assert out[0] == 3 * STEP
    assert a.on_token() == (3 * STEP, 4 * STEP)  # spans skip the gap


def test_dropping_in_flight_audio_is_lost_only_if_never_covered():
    a = StreamAudio(STEP, max_samples=4 * STEP, hysteresis=0)
    a.push(pcm(4 * STEP))
    a.take(4 * STEP)
    a.push(pcm(2 * STEP, 4 * STEP))  # held 6: the 2 oldest in-flight frames dropped
    assert a.take_lost() == []
    a.on_token()
    a.on_token()  # the server covered them after all
    assert a.end_session() == 0
    assert a.held == 4 * STEP  # frames 2..5 wait for the next session
    assert np.array_equal(a.take(100 * STEP), pcm(4 * STEP, 2 * STEP))
    a.push(pcm(4 * STEP, 6 * STEP))  # in-flight frames 2..5 dropped, now at risk
    assert a.take_lost() == []
    assert a.on_token() == (2 * STEP, 3 * STEP)  # session 2 token 0 covers stream frame 2
    lost = a.end_session()  # connection lost: frames 3..5 were dropped and never covered
    assert lost == 3 * STEP
    assert a.take_lost() == [(3 * STEP, 3 * STEP)]


def test_unsent_gap_inside_a_session_keeps_spans_aligned():
    a = StreamAudio(STEP, max_samples=3 * STEP, hysteresis=0)
    a.push(pcm(2 * STEP))
    a.take(2 * STEP)
    assert a.on_token() == (0, STEP)
    assert a.on_token() == (STEP, 2 * STEP)
    a.push(pcm(5 * STEP, 2 * STEP))  # nothing in flight: 2 unsent frames dropped
    assert a.take_lost() == [(2 * STEP, 2 * STEP)]
    a.take(100 * STEP)
    assert a.on_token() == (4 * STEP, 5 * STEP)  # session frame 2 is stream frame 4


def test_drops_are_whole_gaps_not_holes():
    """Past the bound, unsent audio is dropped a quarter of the bound at a time: one gap
    every few blocks instead of a hole in every block."""
    a = StreamAudio(STEP, max_samples=8 * STEP)
    a.push(pcm(8 * STEP))
    for k in range(8, 20):
        a.push(pcm(STEP, k * STEP))
        assert a.held <= 8 * STEP
    gaps = a.take_lost()
    assert gaps == [(0, 12 * STEP)]  # contiguous drops merge into one interval
    assert a.held == 8 * STEP


def test_lost_in_flight_across_a_hole_is_reported_segment_wise():
    a = StreamAudio(STEP, max_samples=2 * STEP, hysteresis=0)
    a.push(pcm(2 * STEP))
    a.take(2 * STEP)  # frames 0,1 in flight
    a.push(pcm(2 * STEP, 2 * STEP))  # in-flight 0,1 dropped (at risk)
    a.push(pcm(2 * STEP, 4 * STEP))  # nothing in flight to drop: unsent 2,3 lost now
    assert a.take_lost() == [(2 * STEP, 2 * STEP)]
    a.take(1 * STEP)  # frame 4, session frame 2
    a.push(pcm(2 * STEP, 6 * STEP))  # frame 4 dropped in flight, unsent frame 5 lost now
    lost = a.end_session()  # in flight and never covered: session frames 0..2
    assert lost == 3 * STEP
    assert a.take_lost() == [(0, 2 * STEP), (4 * STEP, 2 * STEP)]  # 4 (at risk) + 5 adjoin
    assert a.lost_total == 6 * STEP


def test_big_push_is_split_so_drops_free_memory():
    a = StreamAudio(STEP, max_samples=16000)
    a.push(pcm(160_000))
    assert a.held == 16000 - 4000  # dropped down to a quarter below the bound
    # each block is its own copy of at most 1 s: what was dropped is not kept alive by a view
    assert all((b.pcm if b.pcm.base is None else b.pcm.base).size <= 16000 for b in a.unsent)


# ------------------------------------------------------------------ errors ----
def test_connect_errors_are_explained():
    from voxcap.engine.remote.connection import Fatal, Retry, explain_connect_error

    r = explain_connect_error(ConnectionRefusedError(111, "refused"), "ws://h:1", 10)
    assert isinstance(r, Retry) and "refused" in r.message and r.fix
    r = explain_connect_error(socket.gaierror(-2, "Name or service not known"), "ws://x:1", 10)
    assert isinstance(r, Retry) and "host" in r.message
    r = explain_connect_error(TimeoutError(), "ws://h:1", 7)
    assert "7 s" in r.message
    from websockets.datastructures import Headers
    from websockets.exceptions import InvalidStatus
    from websockets.http11 import Response

    for code, cls, word in ((401, Fatal, "API key"), (404, Fatal, "endpoint"),
                            (403, Fatal, "endpoint"),
                            (503, Retry, "503")):
        r = explain_connect_error(InvalidStatus(Response(code, "x", Headers())), "ws://h:1", 10)
        assert isinstance(r, cls) and word in r.message, (code, r.message)


def test_importing_the_remote_engine_does_not_import_vllm():
    import subprocess
    import sys

    code = ("import sys, voxcap.engine.remote.engine, voxcap.commands.options; "
            "assert 'vllm' not in sys.modules and 'torch' not in sys.modules, "
            "[m for m in sys.modules if m.startswith(('vllm', 'torch'))][:5]")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ CLI options ----
def parse(*argv):
    from voxcap.commands import build_parser

    parser, _ = build_parser()
    return parser.parse_args(["transcribe", "a.wav", *argv])


def test_engine_options_and_factory(tmp_path, monkeypatch):
    from voxcap.commands.options import engine_settings, make_engine
    from voxcap.engine.remote.engine import RemoteEngine
    from voxcap.engine.rollover import RollingEngine

    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "config"))
    s = engine_settings(parse("--engine", "remote", "--server", "http://gpu:8000"))
    assert s.server_url == "ws://gpu:8000" and s.server_model == "" and s.api_key is None
    s = engine_settings(parse("--engine", "remote", "--server", "ws://h:1", "--model", "vox"))
    assert s.server_model == "vox"  # --model names the served model with --engine remote
    eng = make_engine(parse("--engine", "remote", "--server", "ws://h:1"))
    assert isinstance(eng, RollingEngine) and isinstance(eng.inner, RemoteEngine)
    bare = make_engine(parse("--engine", "remote", "--server", "ws://h:1"), rollover=False)
    assert isinstance(bare, RemoteEngine)
    for argv in (("--engine", "remote"),  # no --server
                 (),  # local engine without --model
                 ("--engine", "remote", "--server", "ws://h:1", "--model", "a",
                  "--server-model", "b")):
        with pytest.raises(ConfigError) as e:
            engine_settings(parse(*argv))
        assert e.value.fix


def test_api_key_options(tmp_path, monkeypatch):
    from voxcap.commands.options import engine_settings

    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "config"))
    remote = ("--engine", "remote", "--server", "ws://h:1")
    monkeypatch.setenv("MY_KEY", "k-env")
    assert engine_settings(parse(*remote, "--api-key-env", "MY_KEY")).api_key == "k-env"
    key_file = save_api_key(tmp_path / "key", "k-file")
    assert engine_settings(parse(*remote, "--api-key-file", str(key_file))).api_key == "k-file"
    save_api_key(tmp_path / "config" / "remote-api-key", "k-default")  # what the GUI stores
    assert engine_settings(parse(*remote)).api_key == "k-default"
    os.chmod(key_file, 0o640)
    with pytest.raises(ConfigError):
        engine_settings(parse(*remote, "--api-key-file", str(key_file)))
