"""A Ctrl-C lands wherever the main thread is: while a caption is being shown, too. The run must
still stop, flush and write its transcript (seen on a loaded machine: a KeyboardInterrupt raised
mid-event skipped the flush, or left `voxcap live` captioning for minutes). The engine is the GUI
tests' scripted one, so the moment of the signal is exact; the real engine's Ctrl-C is in
test_transcribe_and_bench.py and test_live.py."""

from __future__ import annotations

import json
import os
import signal

import soundfile as sf
from support.gui_fakes import ScriptedEngine

from voxcap.commands import main, terminal_frontend
from voxcap.commands.bench import speech_like


def test_ctrl_c_while_a_caption_is_shown_still_flushes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    before = signal.getsignal(signal.SIGINT)  # pytest's or an earlier test's: put back after
    monkeypatch.setattr(terminal_frontend, "make_engine",
                        lambda args, on_event=None, settings=None, **kw: ScriptedEngine(settings, on_event))
    shown, original = [], terminal_frontend.CaptionRun._show

    def show(self, event):
        if type(event).__name__ == "TextDelta":
            shown.append(event)
            if len(shown) == 5:  # the Ctrl-C arrives while this caption is being shown
                os.kill(os.getpid(), signal.SIGINT)
                self.term.text(event.stream_id, "")  # some more work before the handler returns
        original(self, event)

    monkeypatch.setattr(terminal_frontend.CaptionRun, "_show", show)
    wav, out = tmp_path / "long.wav", tmp_path / "out.jsonl"
    sf.write(wav, speech_like(30.0, seed=3), 16000)
    model = tmp_path / "model"
    model.mkdir()
    rc = main(["transcribe", str(wav), "--model", str(model), "--dummy-weights", "--realtime",
               "--no-journal", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "transcribe: interrupted (Ctrl-C again to abort): flushing" in err, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) >= 5 and records[-1]["end"] < 30.0  # stopped early, written anyway
    assert signal.getsignal(signal.SIGINT) == before  # put back as it was
