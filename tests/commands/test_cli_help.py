"""What ``voxcap`` says about itself: ``--help`` lists the everyday commands first, and
``make-tiny-model`` ends with the commands to run next, each one the parser accepts as printed."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from voxcap.commands import build_parser

EVERYDAY_FIRST = ["gui", "live", "transcribe", "sessions", "export", "doctor", "download",
                  "translate-models", "devices", "serve", "prepare", "make-tiny-model", "bench"]


def voxcap(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "voxcap.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_the_everyday_commands_first():
    r = voxcap("--help")
    assert r.returncode == 0, r.stderr
    listed = re.findall(r"^    ([a-z][a-z-]+)", r.stdout, re.M)
    assert listed == EVERYDAY_FIRST


def test_make_tiny_model_says_what_to_run_next(tmp_path):
    parser, _ = build_parser()
    for weights in (False, True):
        folder = tmp_path / f"tiny model {weights}"
        r = voxcap("make-tiny-model", str(folder), *(["--weights"] if weights else []))
        assert r.returncode == 0, r.stderr
        commands = [line.split("#")[0].strip() for line in r.stdout.splitlines()
                    if line.startswith("  voxcap ")]
        assert [c.split()[1] for c in commands] == ["transcribe", "gui", "serve"], r.stdout
        for command in commands:  # runnable as printed (the folder quoted: it has a space)
            args = parser.parse_args(shlex.split(command)[1:])
            assert args.model == str(folder), command
            assert args.dummy_weights is not weights, command  # only without weight files
