"""`voxcap transcribe --translate-to LANG` end to end with the GUI tests' scripted engine speaking
French (the real engine's tiny model speaks no language) and the tiny CTranslate2 model
installed where voxcap looks: translations printed under the captions, journalled, exported;
a missing pair said once in one line while the captions go on."""

from __future__ import annotations

import soundfile as sf
from support import gui_fakes
from support.gui_fakes import ScriptedEngine
from support.tiny_translation import copy_package

from voxcap.captions.sessions import SessionStore
from voxcap.commands import main, terminal_frontend
from voxcap.commands.bench import speech_like

FRENCH = tuple("Je pense que nous devrions déplacer la réunion à jeudi après-midi.".split())


def _transcribe(tmp_path, monkeypatch, *args):
    monkeypatch.setattr(gui_fakes, "SCRIPT", FRENCH)
    monkeypatch.setattr(terminal_frontend, "make_engine",
                        lambda args, on_event=None, settings=None, **kw: ScriptedEngine(settings, on_event))
    wav = tmp_path / "talk.wav"
    sf.write(wav, speech_like(8.0, seed=1), 16000)
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    return main(["transcribe", str(wav), "--model", str(model), "--dummy-weights", *args])


def test_transcribe_translates_prints_journals_and_exports(tiny_package, tmp_path, monkeypatch,
                                                          capsys):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    copy_package(tiny_package, tmp_path / "data" / "translation-models" / "fr_en", "fr", "en")
    out = tmp_path / "talk.vtt"
    rc = _transcribe(tmp_path, monkeypatch, "--translate-to", "en", "-o", str(out),
                     "--translation", "both")
    err = capsys.readouterr().err
    assert rc == 0, err
    shown = [line for line in err.splitlines() if line.startswith("  [fr→en] ")]
    session = SessionStore(tmp_path / "data" / "sessions").open("last")
    translated = [ln for ln in session.lines if ln.translation]
    # each line's own translation printed once as it comes; the journal keeps a line of a
    # sentence over several with its share of the sentence's translation instead
    assert shown and len(translated) == len(shown)
    assert [f"  [fr→en] {ln.translation}" for ln in translated if not ln.refined] == \
        [said for said, ln in zip(shown, translated, strict=True) if not ln.refined]
    vtt = out.read_text(encoding="utf-8")
    assert vtt.count("<lang fr>") >= len(translated) and vtt.count("<lang en>") >= len(translated)


def test_a_missing_pair_is_one_line_and_the_captions_go_on(tiny_package, tmp_path, monkeypatch,
                                                           capsys):
    monkeypatch.setenv("VOXCAP_DATA_DIR", str(tmp_path / "data"))
    copy_package(tiny_package, tmp_path / "data" / "translation-models" / "fr_en", "fr", "en")
    out = tmp_path / "talk.srt"
    rc = _transcribe(tmp_path, monkeypatch, "--translate-to", "de", "-o", str(out))
    err = capsys.readouterr().err
    assert rc == 0, err
    said = [line for line in err.splitlines() if "Not translated from French" in line]
    assert len(said) == 1 and "voxcap translate-models download fr-de" in said[0]
    assert "[fr→" not in err and "réunion" in out.read_text(encoding="utf-8")
