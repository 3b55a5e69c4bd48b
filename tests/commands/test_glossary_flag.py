"""``--glossary FILE`` of the captioning commands: a bad word list is one line and its fix, before
the engine's long start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

AUDIO = Path(__file__).resolve().parents[2] / "benchmarks" / "audio" / "speech16k.flac"


@pytest.mark.parametrize("content, message", [
    (None, "Cannot read the word list"),
    (b"Okonkwo\n\xff\xfe\n", "is not UTF-8 text"),
    (b"one two three four five six\n", "is too long"),
])
def test_a_bad_word_list_is_one_line_and_a_fix(tmp_path, content, message):
    words = tmp_path / "names.txt"
    if content is not None:
        words.write_bytes(content)
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", "transcribe", str(AUDIO), "--model",
                        str(tmp_path), "--glossary", str(words)], capture_output=True, text=True,
                       timeout=60, env={**os.environ}, check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and message in lines[0], r.stderr
    assert lines[1].startswith("  fix: ") and "one" in lines[1]
