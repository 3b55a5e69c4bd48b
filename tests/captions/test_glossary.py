"""The word list (``captions.glossary``) on real sentences: dozens of ordinary English sentences
come out unchanged with a list of 32 names and terms, and the near misses a caption model makes
of those names are corrected; through the stage that rewrites the engine's deltas, the real
assembler, the journal (both texts) and the exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxcap.captions.assembly import CaptionAssembler
from voxcap.captions.export import render
from voxcap.captions.glossary import Glossary, load_glossary, parse_glossary
from voxcap.captions.glossary_stage import GlossaryStage
from voxcap.captions.journal import Journal
from voxcap.captions.records import parse_record
from voxcap.captions.sessions import read_session_dir
from voxcap.errors import ConfigError
from voxcap.events import EngineFailed, StreamFinished, TextDelta

DATA = Path(__file__).parent / "data"
TERMS = load_glossary(DATA / "glossary_terms.txt")
SENTENCES = parse_glossary((DATA / "ordinary_sentences.txt").read_text(encoding="utf-8"))
GLOSSARY = Glossary(TERMS)

# what the model plausibly writes for a name it half knows -> what the reader should see
NEAR_MISSES = [
    ("I asked Dr. Okonquo about it.", "I asked Dr. Okonkwo about it."),
    ("we deploy on Cooper Netties now", "we deploy on Kubernetes now"),
    ("the Kubernetis cluster is down", "the Kubernetes cluster is down"),
    ("thanks Wen Yi for the notes", "thanks Wenyi for the notes"),
    ("Nguyen Tee Minh will present", "Nguyen Thi Minh will present"),
    ("his bar mitzva is in May", "his Bar Mitzvah is in May"),
    ("open the Graphana dashboard", "open the Grafana dashboard"),
    ("we use Terra form for that", "we use Terraform for that"),
    ("Oluwaseon said so", "Oluwaseun said so"),
    ("before Rosh Hashana begins", "before Rosh Hashanah begins"),
    ("on Yom Kipper we fast", "on Yom Kippur we fast"),
    ("she read the Haftorah beautifully", "she read the Haftarah beautifully"),
    ("see you at Shabat dinner", "see you at Shabbat dinner"),
    ("the book by Tannenbaum", "the book by Tanenbaum"),
    ("Mr. Hernandes called", "Mr. Hernandez called"),
    ("Dimitri is here", "Dmitri is here"),
    ("the Voxstral model", "the Voxtral model"),
    ("ask Priyanca first", "ask Priyanka first"),
    ("move it to Postgre SQL", "move it to PostgreSQL"),
    ("the Ansibel playbook", "the Ansible playbook"),
    ("the Promethius alerts", "the Prometheus alerts"),
    ("Rabbi Feldmann spoke", "Rabbi Feldman spoke"),
    ("Chiddy joined late", "Chidi joined late"),
    # case, and the punctuation around a name, are the sentence's
    ("kubernetes, kafka and grafana.", "Kubernetes, Kafka and Grafana."),
    ("It was Okonkwo's idea", "It was Okonkwo's idea"),
    ("(Siobhan)", "(Siobhan)"),
]


def correct_text(glossary: Glossary, text: str) -> str:
    """The matcher over a whole sentence, as the stage applies it word by word."""
    words, out, i = text.split(), [], 0
    while i < len(words):
        fix = glossary.correct(words[i:i + glossary.window])
        out.append(fix.text if fix else words[i])
        i += fix.words if fix else 1
    return " ".join(out)


def test_the_corpus_is_real_sentences_and_a_list_of_about_thirty_terms():
    assert len(SENTENCES) >= 50 and len(TERMS) >= 30
    assert all(len(s.split()) >= 6 for s in SENTENCES)


def test_ordinary_sentences_are_never_corrected_into_a_name():
    changed = [(s, correct_text(GLOSSARY, s)) for s in SENTENCES if correct_text(GLOSSARY, s) != s]
    assert changed == []


def test_ordinary_sentences_are_left_alone_with_500_terms_too():
    big = Glossary(load_glossary(DATA / "glossary_terms_500.txt"))
    assert len(big.terms) == 500
    assert [s for s in SENTENCES if correct_text(big, s) != s] == []
    assert correct_text(big, "ask Wojciech Kowalcyk and Okonquo") == "ask Wojciech Kowalczyk and Okonquo"


def test_ordinary_sentences_without_a_list_pass_untouched():
    empty = Glossary(())
    assert not empty
    assert all(correct_text(empty, s) == s for s in SENTENCES)


@pytest.mark.parametrize(("said", "shown"), NEAR_MISSES)
def test_near_misses_of_a_name_are_corrected(said, shown):
    assert correct_text(GLOSSARY, said) == shown


def test_a_short_term_is_only_fixed_when_spelled_the_same():
    g = Glossary(["Aoife", "Ansible"])
    assert g.correct(["aoife"]).text == "Aoife"
    assert g.correct(["Eva"]) is None  # too far for 5 letters
    assert g.correct(["Ansible"]) is None  # already right: nothing to do


def test_a_word_that_may_begin_a_term_is_known():
    assert GLOSSARY.could_start("Cooper")  # Kubernetes
    assert GLOSSARY.could_start("Nguyen")  # Nguyen Thi Minh
    assert not GLOSSARY.could_start("meeting")


def test_a_bad_word_list_is_one_line_with_the_fix(tmp_path):
    bad = tmp_path / "names.txt"
    bad.write_bytes(b"Okonkwo\n\xff\xfe\n")
    with pytest.raises(ConfigError) as exc:
        load_glossary(bad)
    assert "not UTF-8" in str(exc.value) and "UTF-8" in exc.value.fix
    with pytest.raises(ConfigError) as exc:
        load_glossary(tmp_path / "missing.txt")
    assert exc.value.args[0].startswith("Cannot read the word list") and "\n" not in exc.value.args[0]
    long = tmp_path / "long.txt"
    long.write_text("one two three four five six\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="too long"):
        load_glossary(long)
    ok = tmp_path / "ok.txt"
    ok.write_text("# team\n  Dr.  Okonkwo  \n\nWenyi # the new one\n", encoding="utf-8")
    assert load_glossary(ok) == ["Dr. Okonkwo", "Wenyi"]


# ------------------------------------------------------------- the engine's deltas ----
def engine_deltas(text: str, stream_id: str = "s1") -> list[TextDelta]:
    """``text`` as the engine sends it: subword pieces of up to 4 characters (the first with the
    word's space), one 80 ms step each, and an empty step after every word."""
    out: list[TextDelta] = []

    def step(piece: str) -> None:
        k = len(out)
        out.append(TextDelta(stream_id, piece, (k,), k, k * 0.08, (k + 1) * 0.08, 1000.0 + k))
    for word in text.split():
        pieces = [word[i:i + 4] for i in range(0, len(word), 4)]
        for i, piece in enumerate(pieces):
            step((" " if i == 0 else "") + piece)
        step("")
    return out


def through_stage(glossary: Glossary, deltas: list[TextDelta], stream_id: str = "s1") -> list:
    stage = GlossaryStage(glossary)
    out = [ev for d in deltas for ev in stage.feed(d)]
    return out + stage.feed(StreamFinished(stream_id, "flushed", len(deltas), 9.0))


def test_the_stage_rewrites_only_the_steps_of_a_corrected_name_and_keeps_every_step():
    deltas = engine_deltas("we deploy on Cooper Netties now, says Dr. Okonquo.")
    out = [e for e in through_stage(GLOSSARY, deltas) if isinstance(e, TextDelta)]
    assert [d.index for d in out] == [d.index for d in deltas]  # same steps, same order
    assert [(d.audio_start_s, d.audio_end_s) for d in out] == \
           [(d.audio_start_s, d.audio_end_s) for d in deltas]
    assert "".join(d.text for d in out) == " we deploy on Kubernetes now, says Dr. Okonkwo."
    said = "".join(d.said if d.said is not None else d.text for d in out)
    assert said == "".join(d.text for d in deltas)  # what the model said, kept
    assert all(d.said is None for d in out if d.text == deltas[d.index].text)


def test_the_stage_holds_a_word_only_while_a_term_may_follow():
    stage = GlossaryStage(GLOSSARY)
    passed = [ev for d in engine_deltas("the meeting starts") for ev in stage.feed(d)]
    # "the" and "meeting" go on as soon as the next word starts; "starts" waits to be finished
    assert "".join(d.text for d in passed) == " the meeting"
    held = GlossaryStage(GLOSSARY)
    deltas = engine_deltas("Cooper Netties")
    first = [ev for d in deltas[:3] for ev in held.feed(d)]  # " Coop" "er" "": then " Nett"
    assert first == []  # "Cooper" may be the start of Kubernetes


def test_the_stage_lets_a_word_go_after_a_pause_without_the_next():
    stage = GlossaryStage(GLOSSARY, hold_s=0.32)
    deltas = engine_deltas("hello Cooper")
    out = [ev for d in deltas for ev in stage.feed(d)]
    assert "".join(e.text for e in out if isinstance(e, TextDelta)) == " hello"
    k = len(deltas)
    for i in range(4):  # 0.32 s of steps with no text after "Cooper" (one was in deltas)
        out += stage.feed(TextDelta("s1", "", (), k + i, (k + i) * 0.08, (k + i + 1) * 0.08, 0.0))
    assert "".join(e.text for e in out if isinstance(e, TextDelta)) == " hello Cooper"


def test_an_engine_that_fails_lets_every_held_word_go_first():
    stage = GlossaryStage(GLOSSARY)
    out = [ev for d in engine_deltas("thanks Cooper") for ev in stage.feed(d)]
    out += [ev for d in engine_deltas("and Wen", "s2") for ev in stage.feed(d)]
    failed = EngineFailed("the engine's process died", "restart it")
    out += stage.feed(failed)
    assert out[-1] is failed
    assert "".join(e.text for e in out if isinstance(e, TextDelta) and e.stream_id == "s1") == \
           " thanks Cooper"
    assert "".join(e.text for e in out if isinstance(e, TextDelta) and e.stream_id == "s2") == \
           " and Wen"
    after = [ev for d in engine_deltas("next") for ev in stage.feed(d)]  # the next engine's s1
    after += stage.feed(StreamFinished("s1", "flushed", 2, 1.0))
    assert "".join(e.text for e in after if isinstance(e, TextDelta)) == " next"  # nothing stale


def test_without_a_list_every_event_passes_at_once():
    stage = GlossaryStage()
    deltas = engine_deltas("Cooper Netties")
    assert [ev for d in deltas for ev in stage.feed(d)] == deltas


def test_the_assembler_journal_and_exports_show_the_name_and_the_journal_keeps_both(tmp_path):
    deltas = engine_deltas("Thanks Wen Yi. The Kubernetis upgrade is done, and the cooper "
                           "fixed the barrels.")
    events = through_stage(GLOSSARY, deltas)
    journal = Journal.create({"model": "m"}, kind="live", root=tmp_path)
    journal.stream_opened("s1", label="Them", source="test")
    asm = CaptionAssembler(width=80, max_lines=3)
    for ev in events:
        journal.on_event(ev)
        asm.on_event(ev)
    journal.close()
    shown = "Thanks Wenyi. The Kubernetes upgrade is done, and the cooper fixed the barrels."
    assert " ".join(line.text for line in asm.history) == shown

    records = [parse_record(json.loads(ln)) for ln in journal.path.read_text().splitlines()]
    deltas_kept = [r for r in records if type(r).__name__ == "DeltaRecord"]
    assert "".join(r.text for r in deltas_kept).strip() == shown
    assert "".join(r.said if r.said is not None else r.text for r in deltas_kept) == \
           "".join(d.text for d in deltas)
    assert {r.said for r in deltas_kept if r.said} >= {" Kube", "rnet", "is"}

    session = read_session_dir(journal.dir)
    srt = render(session, "srt")[0]
    assert "Wenyi" in srt and "Kubernetes" in srt and "Kubernetis" not in srt


def test_a_journal_written_before_the_word_list_still_loads(tmp_path):
    journal = Journal.create({"model": "m"}, kind="live", root=tmp_path)
    for d in engine_deltas("an old session"):
        journal.append(d)
    journal.close()
    lines = journal.path.read_text().splitlines()
    assert all('"said"' not in ln for ln in lines)  # an unchanged step adds nothing
    session = read_session_dir(journal.dir)
    assert "".join(d.text for d in session.records).strip() == "an old session"
    assert all(d.said is None for d in session.records)
