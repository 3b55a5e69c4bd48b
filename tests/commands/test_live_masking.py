"""``--mask-profanity`` masks what ``voxcap live`` and ``transcribe`` print, and what ``live
--share`` serves, as it masks the files they write (the journal keeps the words)."""

from __future__ import annotations

import json
import socket
import urllib.request

from support.caption_script import Script
from support.gui_fakes import FakeAudio

from voxcap.captions.masking import PieceMasker, make_masker
from voxcap.commands import build_parser
from voxcap.commands.live import start_sharing
from voxcap.commands.options import settings_from_flags
from voxcap.commands.terminal_frontend import CaptionRun, Terminal

PIECES = (" Oh", " sh", "it", ",", " that", " is", " fuck", "ing", " good.")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_word_cut_across_pieces_is_masked_once_whole():
    pieces = PieceMasker(make_masker(True))
    shown = [pieces.feed("s1", p) for p in PIECES] + [pieces.release("s1")]
    assert "".join(shown) == " Oh s***, that is f****** good."
    assert "sh" not in shown  # the start of a swear word is never shown alone


def test_the_terminal_prints_masked_captions(capsys):
    term = Terminal(quiet=False, masker=make_masker(True))
    term.labels["s1"] = "Them"
    for p in PIECES:
        term.text("s1", p)
    term.release()
    term.end_line()
    assert capsys.readouterr().out == " Oh s***, that is f****** good.\n"


def test_live_masks_its_captions_and_its_shared_feed(capsys):
    port = _free_port()
    args = build_parser()[0].parse_args(["live", "--no-journal", "--mask-profanity", "--share",
                                         str(port), "--model", "x"])
    cap = CaptionRun(args, None, FakeAudio(), name="live")
    sharing = start_sharing(args, cap, settings_from_flags(args))
    assert sharing is not None
    try:
        def publish(event) -> None:  # as the controller's events reach the run's loop
            cap.hub.publish(event)
            cap._show(event)

        script = Script(publish)
        for p in PIECES:
            script.delta(p)
            script.delta("")
        script.finish()
        cap.term.release()
        cap.term.end_line()
        assert " Oh s***, that is f****** good.\n" in capsys.readouterr().out
        seen = []
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30) as feed:
            for raw in feed:
                line = raw.decode()
                if line.startswith("data:"):
                    seen.append(json.dumps(json.loads(line[5:])))
                    if "good." in seen[-1]:
                        break
        fed = "\n".join(seen)
        # each piece came after a silent step, so "sh" was on the page before "it" arrived:
        # the rest of the word is masked, never the whole word shown
        assert "Oh sh**, that is f****** good." in fed, fed
    finally:
        sharing.stop()
        assert cap.ctl.shutdown().wait(30)
