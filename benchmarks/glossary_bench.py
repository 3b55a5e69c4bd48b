"""The word list's cost per finished caption line (captions/glossary.py, glossary_stage.py).

    python -m benchmarks.glossary_bench [--repeat 20]

The ordinary sentences and the 32 names and terms of tests/captions/data, and its list of 500
(the 32 and made-up "First Last" names), each sentence cut into lines of about 42 columns (the
overlay's) and sent as the engine sends text: subword pieces, one 80 ms step each, an empty step
after every word. Prints, for no list, 30 terms and 500 terms, the time per line spent in the
matcher alone (``Glossary.correct`` over the line's words) and in the whole stage that rewrites
the deltas (``GlossaryStage.feed``), and how many of the words wait for the word after the next
to start (``Glossary.could_start``: they may begin a term of several words).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from voxcap.captions.glossary import Glossary, load_glossary, parse_glossary
from voxcap.captions.glossary_stage import GlossaryStage
from voxcap.events import StreamFinished, TextDelta
from voxcap.framing import STEP_SECONDS as STEP

DATA = Path(__file__).resolve().parents[1] / "tests" / "captions" / "data"
WIDTH = 42


def lines_of(sentences: list[str]) -> list[list[str]]:
    out = []
    for sentence in sentences:
        line: list[str] = []
        for word in sentence.split():
            if line and len(" ".join([*line, word])) > WIDTH:
                out.append(line)
                line = []
            line.append(word)
        out.append(line)
    return out


def deltas(words: list[str]) -> list[TextDelta]:
    out: list[TextDelta] = []
    for word in words:
        for i, piece in enumerate(word[j:j + 4] for j in range(0, len(word), 4)):
            k = len(out)
            out.append(TextDelta("s", (" " if i == 0 else "") + piece, (k,), k, k * STEP,
                                 (k + 1) * STEP, 0.0))
        k = len(out)
        out.append(TextDelta("s", "", (), k, k * STEP, (k + 1) * STEP, 0.0))
    return out


def per_line(glossary: Glossary, lines: list[list[str]], repeat: int) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    for _ in range(repeat):
        for words in lines:
            i = 0
            while i < len(words):
                fix = glossary.correct(words[i:i + glossary.window]) if glossary else None
                i += fix.words if fix else 1
    matcher = (time.perf_counter() - t0) / (repeat * len(lines))
    streams = [deltas(words) for words in lines]
    t0 = time.perf_counter()
    for _ in range(repeat):
        for ds in streams:
            stage = GlossaryStage(glossary)
            for d in ds:
                stage.feed(d)
            stage.feed(StreamFinished("s", "flushed", len(ds), 1.0))
    stage_s = (time.perf_counter() - t0) / (repeat * len(lines))
    words = [w for line in lines for w in line]
    waits = sum(glossary.could_start(w) for w in words) / len(words) if glossary else 0.0
    return matcher, stage_s, waits


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    sentences = parse_glossary((DATA / "ordinary_sentences.txt").read_text(encoding="utf-8"))
    lines = lines_of(sentences)
    terms = load_glossary(DATA / "glossary_terms.txt")
    big = load_glossary(DATA / "glossary_terms_500.txt")
    print(f"{len(lines)} lines of up to {WIDTH} columns, {sum(map(len, lines))} words")
    for name, g in (("no list", Glossary(())), (f"{len(terms)} terms", Glossary(terms)),
                    (f"{len(big)} terms", Glossary(big))):
        matcher, stage, waited = per_line(g, lines, args.repeat)
        print(f"{name:>10}: matcher {matcher * 1e6:7.0f} µs/line, stage {stage * 1e6:7.0f} µs/line,"
              f" words that wait for one more {waited:.1%}")


if __name__ == "__main__":
    main()
