"""Exports checked with independent parsers (``srt``, ``webvtt-py``), not our own reader."""

import html
import itertools
import json
import random
from datetime import timedelta

import pytest
import srt
import webvtt
from support.caption_helpers import deltas_from_pieces, speech

from voxcap.captions.export import RLM, check_export_path, export, render
from voxcap.captions.masking import Masker
from voxcap.errors import ConfigError

MAX_CUE = timedelta(seconds=7)


def parse_srt(text):
    return list(srt.parse(text, ignore_errors=False))


def parse_vtt(text):
    return webvtt.from_string(text, strict=True).captions


def check_subs(starts_ends, texts, end_s=None):
    """Rules every subtitle file must obey, on the parser's view of it."""
    for (start, end), text in zip(starts_ends, texts, strict=False):
        assert timedelta(0) <= start < end
        assert end - start <= MAX_CUE
        lines = text.split("\n")
        assert 1 <= len(lines) <= 2
        assert all(0 < len(line.replace(RLM, "")) <= 42 for line in lines), lines
    speakers = [t.partition(": ")[0] if ": " in t.split("\n")[0] else "" for t in texts]
    for who in set(speakers):  # a speaker's cues never overlap; two speakers' may
        own = [se for se, sp in zip(starts_ends, speakers, strict=True) if sp == who]
        for (s0, e0), (s1, _) in itertools.pairwise(own):
            assert s0 < s1 and e0 <= s1
    if end_s is not None and starts_ends:
        assert max(e for _, e in starts_ends) <= timedelta(seconds=end_s)


def long_talk(n=150, seed=3):
    rng = random.Random(seed)
    vocab = ["the", "captions", "are", "readable", "now,", "really.", "Okay?", "sure", "x"]
    pieces = []
    for _ in range(n):
        pieces += speech([rng.choice(vocab)], gap_steps=rng.choice([0, 0, 0, 1, 3, 15]))
    return deltas_from_pieces(pieces)


def test_srt_is_valid_and_obeys_cue_rules(tmp_path):
    ds = long_talk()
    end_s = ds[-1].audio_end_s
    result = export(ds, tmp_path / "talk.srt")
    subs = parse_srt((tmp_path / "talk.srt").read_text(encoding="utf-8"))
    assert len(subs) == result.items > 5
    assert [s.index for s in subs] == list(range(1, len(subs) + 1))
    check_subs([(s.start, s.end) for s in subs], [s.content for s in subs], end_s)
    words = [d.text.strip() for d in ds if d.text]
    assert " ".join(s.content for s in subs).split() == words


def test_vtt_is_valid_and_obeys_cue_rules(tmp_path):
    ds = long_talk(seed=4)
    export(ds, tmp_path / "talk.vtt")
    text = (tmp_path / "talk.vtt").read_text(encoding="utf-8")
    assert text.startswith("WEBVTT\n")
    caps = parse_vtt(text)
    spans = [(_td(c.start), _td(c.end)) for c in caps]
    check_subs(spans, [c.text for c in caps], ds[-1].audio_end_s)
    assert " ".join(c.text for c in caps).split() == [d.text.strip() for d in ds if d.text]


def _td(stamp: str) -> timedelta:
    h, m, s = stamp.split(":")
    return timedelta(hours=int(h), minutes=int(m), seconds=float(s))


NON_ASCII = ["Grüße,", "naïve", "café", "日本語のテキスト", "emoji👩‍👩‍👧", "ﬁn"]
RTL = ["مرحبا", "بالعالم.", "שלום", "עולם!"]


@pytest.mark.parametrize("suffix", [".srt", ".vtt"])
def test_non_ascii_and_right_to_left_text_survive(tmp_path, suffix):
    pieces = speech(NON_ASCII, gap_steps=20) + speech(RTL, gap_steps=20)
    path = tmp_path / f"intl{suffix}"
    export(deltas_from_pieces(pieces), path)
    raw = path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8, no BOM needed by either format
    if suffix == ".srt":
        texts = [s.content for s in parse_srt(raw.decode())]
    else:
        texts = [html.unescape(c.text) for c in parse_vtt(raw.decode())]
    assert len(texts) == 2
    assert texts[0].replace("\n", " ").split() == NON_ASCII
    rtl_lines = texts[1].split("\n")
    # right-to-left lines are wrapped in RLM so players lay them out right to left
    assert all(line.startswith(RLM) and line.endswith(RLM) for line in rtl_lines)
    assert " ".join(line.strip(RLM) for line in rtl_lines).split() == RTL


def test_vtt_escapes_markup_characters(tmp_path):
    pieces = speech(["a<b", "-->", "x&y", "<v", "Bob>"], 1)
    export(deltas_from_pieces(pieces), tmp_path / "m.vtt")
    caps = parse_vtt((tmp_path / "m.vtt").read_text(encoding="utf-8"))
    assert len(caps) == 1
    assert html.unescape(caps[0].text) == "a<b --> x&y <v Bob>"


def test_several_streams_are_labelled(tmp_path):
    you = deltas_from_pieces(speech(["can", "you", "hear", "me?"], 20), stream_id="mic")
    them = deltas_from_pieces([""] * 8 + speech(["yes,", "loud", "and", "clear."], 20),
                              stream_id="sys")
    labels = {"mic": "You", "sys": "Them"}
    export(you + them, tmp_path / "call.srt", labels=labels)
    export(you + them, tmp_path / "call.vtt", labels=labels)
    export(you + them, tmp_path / "call.txt", labels=labels)
    subs = parse_srt((tmp_path / "call.srt").read_text(encoding="utf-8"))
    check_subs([(s.start, s.end) for s in subs], [s.content for s in subs])
    assert [s.content.split(":")[0] for s in subs] == ["You", "Them"]
    caps = parse_vtt((tmp_path / "call.vtt").read_text(encoding="utf-8"))
    assert [c.voice for c in caps] == ["You", "Them"]
    assert (tmp_path / "call.txt").read_text(encoding="utf-8") == (
        "You: can you hear me?\nThem: yes, loud and clear.\n")


def test_empty_session_gives_valid_empty_files(tmp_path):
    silent = deltas_from_pieces([""] * 50 + ["\ufffd"])
    for source in ([], silent):
        for suffix in (".srt", ".vtt", ".txt", ".jsonl"):
            path = tmp_path / f"empty{suffix}"
            result = export(source, path)
            assert result.words == 0
            assert result.items == (len(source) if suffix == ".jsonl" else 0)
        assert parse_srt((tmp_path / "empty.srt").read_text()) == []
        assert parse_vtt((tmp_path / "empty.vtt").read_text()) == []
        assert (tmp_path / "empty.txt").read_text() == ""
        rows = [json.loads(x) for x in (tmp_path / "empty.jsonl").read_text().splitlines()]
        assert len(rows) == len(source) and not "".join(r["text"] for r in rows).strip("\ufffd")


def test_txt_plain_and_timestamped():
    pieces = [""] * 40 + speech(["First", "part."], 40) + speech(["Second", "part."], 1)
    ds = deltas_from_pieces(pieces)
    assert render(ds, ".txt")[0] == "First part.\nSecond part.\n"
    assert render(ds, ".txt", timestamps=True)[0] == (
        "[00:00:03] First part.\n[00:00:06] Second part.\n")


def test_jsonl_has_every_delta_losslessly():
    ds = deltas_from_pieces([" Hel", "lo", "", " there"], stream_id="mic")
    text, items, nwords = render(ds, ".jsonl", labels={"mic": "You"})
    rows = [json.loads(line) for line in text.splitlines()]
    assert (items, nwords) == (4, 2)
    assert [(r["index"], r["start"], r["end"], r["text"], r["tokens"]) for r in rows] == [
        (d.index, d.audio_start_s, d.audio_end_s, d.text, list(d.token_ids)) for d in ds]
    assert {r["stream"] for r in rows} == {"mic"} and {r["label"] for r in rows} == {"You"}


def test_jsonl_masking_keeps_piece_boundaries_and_drops_tokens():
    ds = deltas_from_pieces([" Sh", "it", "!", " fine"])
    rows = [json.loads(line) for line in render(ds, ".jsonl", masker=Masker(["shit"]))[0].splitlines()]
    assert [r["text"] for r in rows] == [" S*", "**", "!", " fine"]
    assert all("tokens" not in r for r in rows)


def test_masking_in_every_export_format():
    ds = deltas_from_pieces(speech(["well", "shit,", "that", "hurt"], 1))
    masker = Masker(["shit*"])
    for fmt in (".srt", ".vtt", ".txt", ".jsonl"):
        text = render(ds, fmt, masker=masker)[0]
        assert "s***," in text and "shit" not in text, fmt
    assert "shit," in render(ds, ".txt")[0]  # off by default


def test_bad_output_paths_are_user_errors(tmp_path):
    with pytest.raises(ConfigError, match="Unknown transcript format"):
        check_export_path(tmp_path / "x.docx")
    with pytest.raises(ConfigError, match="does not exist"):
        check_export_path(tmp_path / "missing" / "x.srt")
    assert check_export_path(tmp_path / "X.SRT").suffix == ".SRT"


def test_export_writes_no_file_through_a_planted_link(tmp_path):
    """The temporary file is a new one of its own (random name, made exclusively, links not
    followed) and readable by its owner only, as the journal is: a link planted where a
    predictable temporary name would be does not make the export overwrite what it points to."""
    import os
    import stat

    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "talk.srt"
    for pid in {os.getpid(), os.getpid() + 1}:
        (tmp_path / f".talk.srt.{pid}.tmp").symlink_to(victim)
    export(deltas_from_pieces(speech("one two three")), target)
    assert victim.read_text() == "precious"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text().startswith("1\n00:00:00,000 --> ")
    assert not target.is_symlink()
