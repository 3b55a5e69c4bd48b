"""Only the delays Voxtral Realtime was trained on (80 to 1200 ms in steps of 80, and 2400), at
every command that sets one: refused in one line naming them, before any engine starts; and
``voxcap transcribe`` of a file uses the most accurate one unless told otherwise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from voxcap.commands import build_parser
from voxcap.commands.options import engine_settings
from voxcap.commands.transcribe import use_file_delay
from voxcap.errors import ConfigError

UNTRAINED = ("1600", "1280", "2320", "100", "0", "3200")


def voxcap(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", ["transcribe", "live", "serve", "bench"])
def test_each_command_refuses_an_untrained_delay_in_one_line(command, tmp_path):
    audio = [str(tmp_path / "talk.wav")] if command == "transcribe" else []
    r = voxcap(command, *audio, "--model", str(tmp_path), "--delay-ms", "1600")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    error = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert error == ["error: --delay-ms 1600 is not a transcription delay voxcap takes."], r.stderr
    assert "80 to 1200 ms in steps of 80, or 2400" in r.stderr  # the valid ones named


@pytest.mark.parametrize("delay", UNTRAINED)
def test_the_flag_refuses_every_untrained_delay(delay, tmp_path):
    args = build_parser()[0].parse_args(["live", "--model", str(tmp_path), "--delay-ms", delay])
    with pytest.raises(ConfigError) as refused:
        engine_settings(args)
    assert refused.value.setting == "delay_ms"
    assert "in steps of 80, or 2400" in refused.value.fix


@pytest.mark.parametrize("delay", ["80", "1200", "2400", "960"])
def test_the_flag_takes_each_trained_delay(delay, tmp_path):
    args = build_parser()[0].parse_args(["live", "--model", str(tmp_path), "--delay-ms", delay])
    assert engine_settings(args).delay_ms == int(delay)


def test_serve_refuses_an_untrained_delay_before_vllm(tmp_path):
    """``voxcap serve`` builds the server's tokenizer copy from the delay: refused before the
    platform check or vLLM (the same one line as the other commands)."""
    from voxcap.commands import serve

    args = build_parser()[0].parse_args(["serve", "--model", str(tmp_path), "--delay-ms", "2000"])
    with pytest.raises(ConfigError) as refused:
        serve.run(args)
    assert refused.value.setting == "delay_ms"


def _transcribe(*more: str):
    args = build_parser()[0].parse_args(["transcribe", "talk.wav", "--model", "/m", *more])
    use_file_delay(args)
    return args


def test_transcribe_of_a_file_uses_the_most_accurate_delay():
    assert engine_settings(_transcribe()).delay_ms == 2400  # a file waits on nobody
    assert engine_settings(_transcribe("--delay-ms", "240")).delay_ms == 240  # told otherwise
    # paced like a live source: the live default
    assert engine_settings(_transcribe("--realtime")).delay_ms == 480
    # a server's delay is its own (the client only assumes one for its meter)
    remote = _transcribe("--engine", "remote", "--server", "ws://127.0.0.1:9")
    assert remote.delay_ms is None


def test_transcribe_says_so_in_its_help():
    r = voxcap("transcribe", "--help")
    text = " ".join(r.stdout.split())
    assert "here without --realtime: 2400, the most accurate" in text
    assert "uses the most accurate delay, 2400 ms, unless --delay-ms is given" in text
