"""``voxcap sessions`` and ``voxcap export`` on real session directories."""

import os
import subprocess
import sys

import pytest
import srt
import webvtt
from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.journal import Journal
from voxcap.cli import main
from voxcap.events import StreamFinished


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def make_session(session_id, words, title=""):
    j = Journal.create({"model": "m"}, kind="live", title=title, session_id=session_id)
    j.stream_opened("mic", label="You", source="Microphone")
    ds = deltas_from_pieces(speech(words, 3), stream_id="mic")
    for d in ds:
        j.append(d)
    j.on_event(StreamFinished("mic", "flushed", len(ds), ds[-1].audio_end_s))
    j.close()
    return j


def test_sessions_lists_newest_first(data_dir, capsys):
    assert main(["sessions"]) == 0
    assert "no sessions" in capsys.readouterr().err
    make_session("20240301-100000-aaaa", ["old"])
    make_session("20240302-100000-bbbb", ["new"], title="Lecture")
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["20240302-100000-bbbb", "20240301-100000-aaaa"]
    assert "live" in out[0] and "You" in out[0] and "Lecture" in out[0]


def test_export_last_session_to_several_formats(data_dir, tmp_path, capsys):
    make_session("20240301-100000-aaaa", ["hello", "damn", "world."])
    srt_path, txt_path, vtt_path = tmp_path / "a.srt", tmp_path / "a.txt", tmp_path / "a.vtt"
    assert main(["export", "last", "-o", str(srt_path), "-o", str(txt_path), "-o", str(vtt_path),
                 "--timestamps", "--mask-profanity"]) == 0
    err = capsys.readouterr().err
    assert "a.srt: 1 cues, 3 words" in err
    subs = list(srt.parse(srt_path.read_text(encoding="utf-8"), ignore_errors=False))
    assert [s.content for s in subs] == ["hello d*** world."]
    assert txt_path.read_text() == "[00:00:00] hello d*** world.\n"
    assert [c.text for c in webvtt.read(str(vtt_path))] == ["hello d*** world."]


def test_export_of_a_damaged_session_warns_and_exports(data_dir, tmp_path, capsys):
    j = make_session("20240301-100000-aaaa", ["one", "two", "three"])
    with open(j.path, "ab") as f:
        f.write(b'{"type":"delta","stre')  # cut off by a crash
    assert main(["export", "20240301", "-o", str(tmp_path / "x.txt")]) == 0
    assert "warning:" in capsys.readouterr().err
    assert (tmp_path / "x.txt").read_text() == "one two three\n"


def test_export_of_an_empty_session(data_dir, tmp_path, capsys):
    make_session("20240301-100000-aaaa", [])
    assert main(["export", "last", "-o", str(tmp_path / "e.srt")]) == 0
    assert "no text" in capsys.readouterr().err
    assert list(srt.parse((tmp_path / "e.srt").read_text())) == []


@pytest.mark.parametrize("args, message", [
    (["export", "nope", "-o", "{tmp}/x.srt"], "No session"),
    (["export", "last", "-o", "{tmp}/x.docx"], "Unknown transcript format"),
    (["export", "last", "-o", "{tmp}/missing/x.srt"], "does not exist"),
    (["export", "last", "-o", "{tmp}/x.srt", "--mask-words", "{tmp}/nolist.txt"], "word list"),
])
def test_export_errors_are_one_line_and_a_fix(data_dir, tmp_path, args, message):
    make_session("20240301-100000-aaaa", ["x"])
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", *argv], capture_output=True,
                       text=True, timeout=60, env={**os.environ}, check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and message in lines[0]
    assert lines[1].startswith("  fix: ")
