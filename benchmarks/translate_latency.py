"""Translated captions on the CPU: how long a finished line waits for its translation, what the
translation costs the CPU, and whether the captions slow down (voxcap/translate).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.translate_latency \
        [--seconds 40] [--real-shape] [--out FILE.json]   # numpy's matrix throughput on one core

Builds the tests' tiny random Marian model (``tests/support/tiny_translation.py``, converted by
CTranslate2's own converter: no OPUS-MT model can be downloaded here), or with ``--real-shape``
a random-weight model of an OPUS-MT base model's shape and size (6+6 layers, width 512, 8 heads,
feed-forward 2048, a 58,101-piece vocabulary, int8 as Argos Translate ships it: ~75 MB, built
once into ``~/.cache/voxcap-bench``; its SentencePiece model is trained on the user guide and,
where the system has it, GnuPG's French help text). Random weights say nothing of a translation's
length, so every line is decoded to exactly as many tokens as its source has (``length_ratio``
1.0; a real translation's length is close to its source's). Then it feeds "Both" at a
conversational rate, paced in real time: two streams, a word every 0.4 s each (150 words a
minute), a 2 s pause after each sentence, French text translated into English. The caption
consumer is what the app runs on each event: the display's ``CaptionAssembler``, plus
``app.line_translation.LineTranslation`` when it is on. Three phases in one run, ``--seconds``
each: no line worker (as before translation existed), languages only, translation on.

Figures: the caption path's lateness (when an event was handled minus when it was due) p50/p95
per phase; a finished line's wait for its own translation (from when the next line started it:
what the live displays wait for) and for its share of its sentence's (the record's; the line
waits for the rest of its sentence), p50/p95; the translator's time from a line's or a
sentence's submission to its result, p50/p95; the CPU share per phase (of one core) of this
process and the translation process;
the machine's load average (others share it); the model's time per line and per output token
alone; and, for the tiny model, an estimate for an OPUS-MT base model from its FLOPs per token
and the float32 matrix throughput measured here on one core (``--real-shape`` measures that
model's size instead).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.percentiles import percentile
from voxcap.app.line_translation import LineTranslation, line_key
from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import LineTranslated, StreamFinished, TextDelta
from voxcap.framing import STEP_SECONDS
from voxcap.translate.package import PairTranslator, read_package
from voxcap.translate.worker import Translators

TEXT = ("Je pense que nous devrions déplacer la réunion à jeudi après-midi. Le train de dix heures "
        "est annoncé avec vingt minutes de retard. Merci à tous d'être venus si nombreux ce matin. "
        "Nous allons maintenant passer au point suivant de l'ordre du jour. Est-ce que tout le "
        "monde a bien reçu le compte rendu de la dernière séance ?").split()
WORD_EVERY_STEPS = 5  # 0.4 s: 150 words a minute
PAUSE_STEPS = 25  # 2 s after a sentence
SETTLE_S = 3.0

# OPUS-MT base (Marian transformer-base): per output token in the decoder, per input token in
# the encoder, multiply-adds x2 = FLOPs
D, FFN, LAYERS, VOCAB, BEAM = 512, 2048, 6, 58101, 2
DECODER_FLOPS = 2 * (LAYERS * (8 * D * D + 2 * D * FFN) + D * VOCAB)
ENCODER_FLOPS = 2 * LAYERS * (4 * D * D + 2 * D * FFN)


def _schedule(seconds: float):
    """(due time from start, event) for two streams speaking French at 150 words a minute."""
    out = []
    for sid, offset in (("them", 0), ("you", 2)):
        step, word, index = offset, 0, 0
        while (step + 1) * STEP_SECONDS < seconds:
            text = ""
            if (step - offset) % WORD_EVERY_STEPS == 0:
                text = " " + TEXT[word % len(TEXT)]
                word += 1
            out.append(((step + 1) * STEP_SECONDS, TextDelta(
                sid, text, (), index, step * STEP_SECONDS, (step + 1) * STEP_SECONDS, 0.0)))
            index += 1
            step += PAUSE_STEPS if text.endswith((".", "?")) else 1
        out.append((seconds, StreamFinished(sid, "flushed", index, seconds)))
    return sorted(out, key=lambda x: x[0])


def _phase(seconds: float, lines: LineTranslation | None,
           finished: dict[tuple[str, float], float] | None = None) -> dict:
    """``finished``: filled with when each line was finished (the next line of its stream began)."""
    display = CaptionAssembler()
    late: list[tuple[float, float]] = []  # (due, lateness)
    cpu0, t0 = _cpu_s(), time.monotonic()
    for due, event in _schedule(seconds):
        wait = t0 + due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        for update in display.on_event(event):
            if update.new_line and finished is not None:
                before = [ln for ln in display.history
                          if ln.stream_id == update.line.stream_id and ln.line_id < update.line.line_id]
                if before:
                    finished.setdefault(line_key(before[-1].stream_id, before[-1].start_s),
                                        time.monotonic())
        if lines is not None:
            lines.on_event(event)
        late.append((due, time.monotonic() - (t0 + due)))
    if lines is not None:
        lines.close(drain_s=30)
    wall, cpu = time.monotonic() - t0, _cpu_s() - cpu0
    every = [x for _, x in late]
    settled = [x for due, x in late if due >= SETTLE_S]  # after the models loaded (a second of
    # CPU, once per session, in the translation process)

    def ms(values: list[float], q: float) -> float:
        return round((percentile(values, q) or 0.0) * 1000, 2)
    return {"caption_late_p50_ms": ms(every, 50), "caption_late_p95_ms": ms(every, 95),
            "caption_late_max_ms": ms(every, 100),
            f"caption_late_p95_after_{SETTLE_S:g}s_ms": ms(settled, 95),
            "cpu_share_of_one_core": round(cpu / wall, 4), "events": len(late)}


def _cpu_s() -> float:
    """CPU seconds of this process and of its ended children: the translation process's once
    ``close`` has ended it (the phase's end)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _matmul_gflops() -> float:
    a = np.random.default_rng(0).standard_normal((64, D), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((D, FFN), dtype=np.float32)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < 1.0:
        a @ b
        n += 1
    return 2 * 64 * D * FFN * n / (time.perf_counter() - t) / 1e9


def _real_shape_package(models: Path) -> Path:
    """The OPUS-MT-base-shaped package, built once (~75 MB, a minute) and linked into ``models``."""
    from tests.support.tiny_translation import OPUS_MT_BASE, make_package

    cached = Path.home() / ".cache" / "voxcap-bench" / "opus-mt-base-shape" / "fr_en"
    if not (cached / "model" / "model.bin").is_file():
        text = "\n".join(p.read_text(encoding="utf-8")
                         for p in sorted(Path("docs/guide").glob("*.md")))
        french = Path("/usr/share/gnupg/help.fr.txt")
        if french.is_file():
            text += "\n" + french.read_text(encoding="utf-8", errors="replace")
        make_package(cached, "fr", "en", shape=OPUS_MT_BASE, corpus_text=text,
                     quantization="int8")
    models.mkdir(parents=True)
    (models / "fr_en").symlink_to(cached)
    return models / "fr_en"


def _ms(values: list[float], q: float) -> float:
    return round((percentile(values, q) or 0.0) * 1000, 1)


def _model_alone(folder: Path, length_ratio: float | None) -> dict:
    """One 12-word line, 20 times, on one core: its time and its tokens."""
    translator = PairTranslator(read_package(folder), length_ratio=length_ratio)
    sentence = " ".join(TEXT[:12])
    source_tokens = len(translator._sp.encode(sentence, out_type=str))
    translator.translate([sentence])  # warm
    t = time.perf_counter()
    for _ in range(20):
        out = translator.translate([sentence])[0]
    per_line = (time.perf_counter() - t) / 20
    out_tokens = len(translator._sp.encode(out, out_type=str)) if length_ratio is None else \
        round(length_ratio * source_tokens)
    return {"line_words": 12, "line_source_tokens": source_tokens,
            "line_output_tokens": out_tokens, "ms_per_line": round(per_line * 1000, 1),
            "ms_per_output_token": round(per_line / max(out_tokens, 1) * 1000, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=40.0, help="each phase's length")
    ap.add_argument("--real-shape", action="store_true",
                    help="a random-weight model of an OPUS-MT base model's size, not the tiny one")
    ap.add_argument("--out", help="add the figures to this JSON file (under \"tiny\" or "
                                  "\"real_shape\", the other kept)")
    args = ap.parse_args()
    from tests.support.tiny_translation import make_package

    ratio = 1.0 if args.real_shape else None
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        folder = _real_shape_package(models) if args.real_shape else \
            make_package(models / "fr_en", "fr", "en")
        figures: dict = {"model": "OPUS-MT base shape, random weights, int8, decoded to the "
                                  "source's length" if args.real_shape else "tiny random Marian",
                         "model_mb": round(sum(p.stat().st_size for p in (folder / "model").rglob("*")
                                               if p.is_file()) / 1e6, 1),
                         "seconds_per_phase": args.seconds, "cores": os.cpu_count(),
                         "load_average_before": [round(x, 2) for x in os.getloadavg()]}
        figures["off"] = _phase(args.seconds, None)
        figures["languages_only"] = _phase(args.seconds, LineTranslation(lambda e: None))
        # from submission to result: a line's own translation, a sentence's (refined)
        waits: dict[bool, list[float]] = {False: [], True: []}
        # from when a line was finished to its own translation, to its share of its sentence's
        line_waits: dict[bool, list[float]] = {False: [], True: []}
        finished: dict[tuple[str, float], float] = {}
        lock = threading.Lock()

        def shown(event: LineTranslated) -> None:
            if event.translation and (t := finished.get(line_key(event.stream_id,
                                                                  event.start_s))) is not None:
                with lock:
                    line_waits[event.refined].append(time.monotonic() - t)
        lines = LineTranslation(shown, target="en",
                                translators=Translators(models, length_ratio=ratio))
        real = lines.worker.on_result

        def timed(result) -> None:
            if result.translation:
                with lock:
                    waits[result.line.refined].append(result.latency_s)
            real(result)
        lines.worker.on_result = timed
        figures["translation_on"] = _phase(args.seconds, lines, finished)
        figures["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        figures["lines_translated"] = len(waits[False])
        figures["sentences_translated"] = len(waits[True])
        figures["dropped_lines_behind"] = lines.worker.dropped
        figures["dropped_sentences_behind"] = lines.worker.dropped_sentences
        for name, refined in (("line", False), ("sentence", True)):
            figures[f"{name}_translation_p50_ms"] = _ms(waits[refined], 50)
            figures[f"{name}_translation_p95_ms"] = _ms(waits[refined], 95)
        for name, refined in (("own", False), ("share", True)):
            figures[f"line_wait_{name}_p50_ms"] = _ms(line_waits[refined], 50)
            figures[f"line_wait_{name}_p95_ms"] = _ms(line_waits[refined], 95)
            figures[f"line_wait_{name}_count"] = len(line_waits[refined])
        figures["alone_on_one_core"] = _model_alone(folder, ratio)
        if not args.real_shape:
            gflops = _matmul_gflops()
            figures["float32_gflops_one_core"] = round(gflops, 1)
            # a 12-word line: ~20 source tokens, ~20 output tokens, beam 2
            est = (20 * ENCODER_FLOPS + 20 * BEAM * DECODER_FLOPS) / (gflops * 1e9)
            figures["opus_mt_base_estimate_ms_per_line"] = round(est * 1000, 1)
    print(json.dumps(figures, indent=2))
    if args.out:
        out = Path(args.out)
        kept = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
        kept["real_shape" if args.real_shape else "tiny"] = figures
        out.write_text(json.dumps(kept, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
