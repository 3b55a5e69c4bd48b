"""The journal on real files: round trip, damage, unwritable and full data directories,
and a real process killed with SIGKILL mid-session."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.export import export, render
from voxcap.captions.journal import Journal
from voxcap.captions.records import JOURNAL_NAME, SESSION_NAME
from voxcap.captions.sessions import SessionError, SessionStore, read_session_dir
from voxcap.events import StreamFinished

SETTINGS = {"model": "/models/voxtral", "graph_mode": "FULL_DECODE_ONLY", "delay_ms": 480,
            "sources": {"mic": "Built-in microphone"}}


def write_session(root, pieces=None, session_id=None, finish=True):
    pieces = pieces if pieces is not None else speech(["hello", "journal", "world."], 3)
    ds = deltas_from_pieces(pieces, stream_id="mic")
    statuses = []
    j = Journal.create(SETTINGS, kind="live", root=root, session_id=session_id,
                       on_status=statuses.append)
    j.stream_opened("mic", label="You", source="Built-in microphone")
    assert all(j.append(d) for d in ds)
    if finish:
        j.on_event(StreamFinished("mic", "flushed", len(ds), len(ds) * 0.08))
        j.close()
    assert statuses == []
    return j, ds


def test_round_trip(tmp_path):
    j, ds = write_session(tmp_path)
    meta = json.loads((j.dir / SESSION_NAME).read_text())
    assert meta["settings"] == SETTINGS and meta["kind"] == "live"
    assert meta["streams"]["mic"]["label"] == "You" and meta["ended"]
    assert (os.stat(j.dir).st_mode & 0o777) == 0o700
    s = read_session_dir(j.dir)
    assert s.warnings == []
    assert [(r.stream_id, r.index, r.text, r.audio_start_s, r.audio_end_s) for r in s.records] == [
        (d.stream_id, d.index, d.text, d.audio_start_s, d.audio_end_s) for d in ds]
    assert all(r.session_id == j.session_id for r in s.records)
    assert s.labels == {"mic": "You"} and s.audio_seconds == pytest.approx(len(ds) * 0.08)
    assert render(s, ".txt")[0] == "hello journal world.\n"


def test_store_lists_newest_first_and_finds_sessions(tmp_path):
    write_session(tmp_path, session_id="20240101-090000-aaaa")
    time.sleep(0.01)
    write_session(tmp_path, session_id="20240102-090000-bbbb")
    time.sleep(0.01)
    j, _ = write_session(tmp_path, session_id="20240102-100000-cccc", finish=False)
    store = SessionStore(tmp_path)
    infos = store.list()
    assert [i.session_id for i in infos] == [
        "20240102-100000-cccc", "20240102-090000-bbbb", "20240101-090000-aaaa"]
    assert not infos[1].interrupted and infos[1].state == "finished"
    # not closed: in progress while the process writing it lives (this one), else interrupted
    assert infos[0].state == "in progress" and not infos[0].interrupted
    assert dataclasses.replace(infos[0], pid=None).interrupted
    assert store.find("last") == j.dir
    assert store.find("20240101").name == "20240101-090000-aaaa"
    assert store.find(str(j.dir / JOURNAL_NAME)) == j.dir
    with pytest.raises(SessionError, match="2 sessions start with"):
        store.find("20240102")
    with pytest.raises(SessionError, match="No session"):
        store.find("1999")
    with pytest.raises(SessionError, match="No sessions"):
        SessionStore(tmp_path / "none").find("last")
    j.close()


def test_journal_cut_off_mid_record_is_read_up_to_the_last_complete_one(tmp_path):
    j, ds = write_session(tmp_path, finish=False)
    j.close()
    data = j.path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    assert b'"type":"delta"' in last
    j.path.write_bytes(data[:-len(last) // 2])  # a crash in the middle of the last delta
    s = read_session_dir(j.dir)
    assert len(s.warnings) == 1 and "cut off" in s.warnings[0]
    assert [r.index for r in s.records] == list(range(len(ds) - 1))


def test_corrupt_line_in_the_middle_is_skipped_with_a_warning(tmp_path):
    j, ds = write_session(tmp_path)
    lines = j.path.read_bytes().split(b"\n")
    bad = 5
    lines[bad] = lines[bad][:30] + b"\xff\xfe garbage"
    lines.insert(9, b'{"type": "delta", "text": 5}')  # valid JSON, wrong shape
    lines.insert(12, b"[1, 2, 3]")
    j.path.write_bytes(b"\n".join(lines))
    s = read_session_dir(j.dir)
    assert len(s.warnings) == 3
    assert f"line {bad + 1}:" in s.warnings[0] and "corrupt" in s.warnings[0]
    assert len(s.records) == len(ds) - 1  # only the damaged delta is missing
    assert render(s, ".srt")[1] >= 1


def test_missing_or_corrupt_session_json_is_rebuilt_from_the_journal(tmp_path):
    j, ds = write_session(tmp_path)
    (j.dir / SESSION_NAME).write_text("{not json")
    s = SessionStore(tmp_path).open(j.session_id)
    assert s.labels == {"mic": "You"} and len(s.records) == len(ds)
    assert any(SESSION_NAME in w for w in s.warnings)
    (j.dir / SESSION_NAME).unlink()
    assert len(SessionStore(tmp_path).open("last").records) == len(ds)


# ------------------------------------------------------- unwritable data dirs ----
@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs (we run as root); skip where mounting is not allowed."""
    mounts = []

    def make(options: str):
        d = tmp_path / f"mnt{len(mounts)}"
        d.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(d)],
                           capture_output=True, text=True, check=False)
        if r.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        mounts.append(d)
        return d

    yield make
    for d in mounts:
        subprocess.run(["umount", "-l", str(d)], check=False)


def run_live_loop(journal, deltas):
    """What ``voxcap live`` does per event: journal it, then show it."""
    asm = CaptionAssembler()
    asm.set_label("mic", "You")
    written = []
    for d in deltas:
        written.append(journal.append(d))
        asm.feed(d)
    asm.finish("mic")
    return asm, written


@pytest.mark.parametrize("how", ["read-only mount", "path under a file"])
def test_read_only_data_dir_captions_go_on_and_user_is_told_once(tmp_path, tmpfs, how):
    if how == "read-only mount":
        root = tmpfs("ro,size=64k") / "sessions"
    else:
        (tmp_path / "afile").write_text("x")
        root = tmp_path / "afile" / "sessions"
    statuses = []
    j = Journal.create(SETTINGS, root=root, on_status=statuses.append, retry_s=0.01)
    assert not j.writing
    ds = deltas_from_pieces(speech(["still", "captioned"] * 20, 1), stream_id="mic")
    asm, written = run_live_loop(j, ds)
    assert not any(written)
    assert " ".join(line.text for line in asm.history).split() == ["still", "captioned"] * 20
    assert len(statuses) == 1 and not statuses[0].writing
    assert "not being written" in statuses[0].message and statuses[0].fix
    # what was not written can still be exported before quitting
    assert render(j.session(), ".txt")[0].split() == ["still", "captioned"] * 20
    j.close()
    assert len(statuses) == 1


def test_full_disk_then_space_again_loses_nothing(tmpfs):
    mnt = tmpfs("size=64k")
    statuses = []
    j = Journal.create(SETTINGS, root=mnt / "sessions", on_status=statuses.append, retry_s=0.0)
    assert j.writing
    ds = deltas_from_pieces(speech([f"w{i}" for i in range(300)]), stream_id="mic")
    assert all(j.append(d) for d in ds[:50])
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk: the journal hits ENOSPC
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    asm, written = run_live_loop(j, ds[50:200])
    assert not all(written) and len(asm.history) > 10
    assert [s.writing for s in statuses] == [False]
    assert "No space left" in statuses[0].message
    filler.unlink()  # space again: the next append writes the backlog first
    _asm2, written2 = run_live_loop(j, ds[200:])
    assert all(written2)
    assert [s.writing for s in statuses] == [False, True]
    j.close()
    s = read_session_dir(j.dir)
    assert [r.index for r in s.records] == list(range(300))  # nothing lost, in order
    # a record the full disk cut in half is left as one skipped line, then written whole
    assert all("corrupt" in w for w in s.warnings) and len(s.warnings) <= 1


# --------------------------------------------------------------- kill -9 ---------
CHILD = r"""
import sys, time
from voxcap.captions.journal import Journal
from voxcap.events import TextDelta
j = Journal.create({"model": "x"}, kind="test", root=sys.argv[1], session_id="crash")
j.stream_opened("A", label="You")
j.stream_opened("B", label="Them")
k = 0
while True:
    for sid in ("A", "B"):
        d = TextDelta(sid, f" w{k}", (k,), k, k * 0.08, (k + 1) * 0.08, time.time())
        if j.append(d):
            sys.stdout.write(f"{sid} {k}\n")
            sys.stdout.flush()
    k += 1
"""


def test_sigkill_mid_session_loses_nothing_reported_written(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True, cwd=os.getcwd())
    reported = []
    try:
        for line in proc.stdout:
            reported.append(tuple(line.split()))
            if len(reported) >= 3000:
                os.kill(proc.pid, signal.SIGKILL)  # mid-session, while writing flat out
                break
        reported += [tuple(line.split()) for line in proc.stdout]  # written before the kill
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    s = read_session_dir(tmp_path / "crash")
    in_file = {(r.stream_id, str(r.index)) for r in s.records}
    missing = [r for r in reported if r not in in_file]
    assert missing == []
    assert len(in_file) - len(reported) <= 1  # at most the record written as it was killed
    assert s.labels == {"A": "You", "B": "Them"}
    assert SessionStore(tmp_path).list()[0].interrupted
    export(s, tmp_path / "after-crash.srt")  # a crashed session exports like any other
    assert (tmp_path / "after-crash.srt").stat().st_size > 0


def test_rollovers_are_journalled_and_read_back(tmp_path):
    from voxcap.captions.journal import Journal
    from voxcap.captions.sessions import read_session_dir
    from voxcap.events import SessionRolled, StreamFinished, TextDelta

    j = Journal.create({"model": "tiny"}, kind="live", root=tmp_path)
    j.stream_opened("s1", label="Them")
    j.on_event(TextDelta("s1", " a", (300,), 0, 0.0, 0.08, 1.0))
    j.on_event(SessionRolled("s1", 1, 61.28, "pause", 2.0))
    j.on_event(SessionRolled("s1", 2, 120.0, "max_length", 3.0, lost_s=0.5))
    j.on_event(TextDelta("s1", " b", (301,), 1, 61.28, 61.36, 4.0))
    j.on_event(StreamFinished("s1", "flushed", 2, 61.4))
    j.close()
    session = read_session_dir(j.dir)
    assert [(r.engine_session, r.at_audio_s, r.reason) for r in session.rollovers] == [
        (1, 61.28, "pause"), (2, 120.0, "max_length")]
    assert [r.text for r in session.records] == [" a", " b"]  # deltas unaffected
    assert any("0.50 s" in w and "dropped by the engine" in w for w in session.warnings)
