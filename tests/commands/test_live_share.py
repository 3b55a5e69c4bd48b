"""`voxcap live --share`: the options, and a busy port or an allowed site that is not one site
(``*``, ``null``, a path...) refused in one line with its fix before the engine's long start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def _live(args, env):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", "live", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_busy_share_port_is_one_line_before_the_engine(pulse, tmp_path):
    env = {**pulse.env(), "VOXCAP_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        r = _live(["--share", str(port), "--model", str(tmp_path / "no-model-needed"),
                   "--dummy-weights", "--source", "system"], env)
    finally:
        taken.close()
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert (f"error: Port {port} is in use (another program, or another voxcap sharing "
            "captions).\n  fix: pick another port") in r.stderr
    assert "engine:" not in r.stderr  # refused before the engine was started
    r = _live(["--share-lan", "--model", "x"], env)
    assert r.returncode != 0 and "error: --share-lan, --share-token and --share-allow-origin " \
        "need --share." in r.stderr
    r = _live(["--share", "80", "--model", "x"], env)
    assert "error: --share 80 is not a port voxcap takes.\n  fix: give --share 1024 to 65535" \
        in r.stderr


def test_an_allowed_site_is_one_exact_site(pulse, tmp_path):
    env = {**pulse.env(), "VOXCAP_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    expected = {
        "*": "“*” would let every web site read the captions",
        "null": "“null” is the origin of sandboxed frames and local files",
        "https://notes.example/": "a site has no path, query or user name",
        "https://a.example https://b.example": "one site only",
        "notes.example": "not a site: give scheme://host[:port]",
    }
    for value, line in expected.items():
        r = _live(["--share", "--share-allow-origin", value, "--model", "x", "--source",
                   "system"], env)
        assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
        (error,) = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
        assert error.startswith(f"error: --share-allow-origin {value!r}: {line}"), error
        assert "fix: leave it out, or give the one site" in r.stderr
        assert "engine:" not in r.stderr


def test_obs_text_is_checked_in_one_line(pulse, tmp_path):
    """``--obs-text translation`` needs the captions sent to OBS and translated; a value it does
    not take is named with those it does."""
    env = {**pulse.env(), "VOXCAP_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    r = _live(["--obs-captions", "--obs-text", "translation", "--model", "x"], env)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert ("error: --obs-text translation needs --obs-captions and --translate-to.\n"
            "  fix: add them, or leave --obs-text out") in r.stderr
    r = _live(["--obs-captions", "--obs-text", "subtitles", "--model", "x"], env)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--obs-text" in r.stderr and "original, translation" in r.stderr, r.stderr
