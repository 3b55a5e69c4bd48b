"""Translated captions on the CPU: how long a finished line waits for its translation, what the
translation costs the CPU, and whether the captions slow down (voxcap/translate).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.translate_latency \
        [--seconds 40] [--out FILE.json]      # numpy's matrix throughput on one core

Builds the tests' tiny random Marian model (``tests/support/tiny_translation.py``, converted by
CTranslate2's own converter: no OPUS-MT model can be downloaded here), then feeds "Both" at a
conversational rate, paced in real time: two streams, a word every 0.4 s each (150 words a
minute), a 2 s pause after each sentence, French text translated into English. The caption
consumer is what the app runs on each event: the display's ``CaptionAssembler``, plus
``app.line_translation.LineTranslation`` when it is on. Three phases in one run, ``--seconds``
each: no line worker (as before translation existed), languages only, translation on.

Figures: the caption path's lateness (when an event was handled minus when it was due) p50/p95
per phase; a finished line's wait for its translation p50/p95; the process's CPU share per phase
(of one core); the tiny model's time per output token; and, scaled honestly, an estimate for an
OPUS-MT base model (6+6 layers, width 512, 58k vocabulary: its FLOPs per token divided by the
float32 matrix throughput measured here on one core; CTranslate2's int8 is usually faster, so
it is an upper estimate).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.percentiles import percentile
from voxcap.app.line_translation import LineTranslation
from voxcap.captions.assembly import CaptionAssembler
from voxcap.events import StreamFinished, TextDelta
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


def _phase(seconds: float, lines: LineTranslation | None) -> dict:
    display = CaptionAssembler()
    late: list[tuple[float, float]] = []  # (due, lateness)
    cpu0, t0 = time.process_time(), time.monotonic()
    for due, event in _schedule(seconds):
        wait = t0 + due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        display.on_event(event)
        if lines is not None:
            lines.on_event(event)
        late.append((due, time.monotonic() - (t0 + due)))
    if lines is not None:
        lines.close(drain_s=30)
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
    every = [x for _, x in late]
    settled = [x for due, x in late if due >= SETTLE_S]  # after the models loaded (a second of
    # CPU, once per session, in the worker's thread)

    def ms(values: list[float], q: float) -> float:
        return round((percentile(values, q) or 0.0) * 1000, 2)
    return {"caption_late_p50_ms": ms(every, 50), "caption_late_p95_ms": ms(every, 95),
            "caption_late_max_ms": ms(every, 100),
            f"caption_late_p95_after_{SETTLE_S:g}s_ms": ms(settled, 95),
            "cpu_share_of_one_core": round(cpu / wall, 4), "events": len(late)}


def _matmul_gflops() -> float:
    a = np.random.default_rng(0).standard_normal((64, D), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((D, FFN), dtype=np.float32)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < 1.0:
        a @ b
        n += 1
    return 2 * 64 * D * FFN * n / (time.perf_counter() - t) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=40.0, help="each phase's length")
    ap.add_argument("--out", help="write the figures as JSON here too")
    args = ap.parse_args()
    from tests.support.tiny_translation import make_package

    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        folder = make_package(models / "fr_en", "fr", "en")
        figures: dict = {"seconds_per_phase": args.seconds}
        figures["off"] = _phase(args.seconds, None)
        figures["languages_only"] = _phase(args.seconds, LineTranslation(lambda e: None))
        waits: list[float] = []  # the first line's includes loading the model
        lock = threading.Lock()
        lines = LineTranslation(lambda e: None, target="en", translators=Translators(models))
        real = lines.worker.on_result

        def timed(result) -> None:
            if result.translation:
                with lock:
                    waits.append(result.latency_s)
            real(result)
        lines.worker.on_result = timed
        figures["translation_on"] = _phase(args.seconds, lines)
        figures["translated_lines"] = len(waits)
        figures["translation_wait_p50_ms"] = round((percentile(waits, 50) or 0) * 1000, 1)
        figures["translation_wait_p95_ms"] = round((percentile(waits, 95) or 0) * 1000, 1)

        translator = PairTranslator(read_package(folder))
        sentence = " ".join(TEXT[:12])
        sp_tokens = len(translator._sp.encode(sentence, out_type=str))
        out_tokens = len(translator._sp.encode(translator.translate([sentence])[0], out_type=str))
        t = time.perf_counter()
        for _ in range(20):
            translator.translate([sentence])
        per_line = (time.perf_counter() - t) / 20
        figures["tiny_ms_per_output_token"] = round(per_line / max(out_tokens, 1) * 1000, 3)
        gflops = _matmul_gflops()
        figures["float32_gflops_one_core"] = round(gflops, 1)
        # a 12-word line: ~20 source tokens, ~20 output tokens, beam 2
        est = (20 * ENCODER_FLOPS + 20 * BEAM * DECODER_FLOPS) / (gflops * 1e9)
        figures["opus_mt_base_estimate_ms_per_line"] = round(est * 1000, 1)
        figures["tiny_source_tokens_per_line"] = sp_tokens
    print(json.dumps(figures, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
