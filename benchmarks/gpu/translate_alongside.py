"""Translation beside the GPU engine (issue 48 on CUDA): `voxcap transcribe --realtime` on the real
model shape, with translation off and on (`--translate-to en`, an OPUS-MT-base-shaped model, int8,
on the CPU), the whole process tree pinned to CORES CPU cores as on a desktop. Prints the
engine's step and the caption lag of each run, and the translation's latency (a finished line
handed to the worker → its translation back) and the lines translated.

The runs (``--runs``, in this order, in one go): ``off``; ``process``, as the app runs it now (the
model in a process of its own at SCHED_IDLE); ``thread``, as it ran before (the model in the
worker's own thread of the app, lowered to nice +10: the 0.3 s stalls measured on the H200).
``worker_nice`` in each run's figures is the nice of the worker's thread as it delivered the
translations: 10 for ``thread``, the app's own for ``process`` (each run is what it says).
``--spy`` records each run's voxcap process with py-spy (every thread, idle ones too) into
WORK/spy-RUN.txt, and prints for each thread the frames it was seen in most.

GPU machine, after the GPU kit's install plus the ctranslate2 and sentencepiece wheels (and
py-spy's for ``--spy``):
    . .gpu/kit/env.sh; python3 benchmarks/gpu/translate_alongside.py [--seconds 30] [--cores 0-3] \
        [--runs off,process,thread] [--spy]

The captions are the dummy weights' gibberish, so the language detector is told "fr" (as
benchmarks/translate_walk.py does); everything after it is voxcap's own code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

LAUNCHER = r'''
import json, os, sys, threading, time
from voxcap.translate import detect
detect.LanguageDetector.detect = lambda self, text, previous="": detect.LanguageGuess("fr", 1.0)
from voxcap.app import line_translation as lt
if os.environ.get("VOXCAP_TRANSLATE_IN_THREAD"):  # as before: the model in the worker's thread
    from voxcap.translate import package as P, worker as W
    class InThread:
        def __init__(self, root, threads=1, length_ratio=None):
            self.root, self.loaded = root, {}
        def start(self, target=""):  # from the worker's thread: the old lower_priority()
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + 10))
        def close(self):
            pass
        def get(self, source, target):
            pairs = P.route(P.installed_pairs(self.root), source, target)
            steps = self.loaded.setdefault((source, target), [P.PairTranslator(p) for p in pairs])
            class Route:
                def translate(self, texts):
                    for step in steps:
                        texts = step.translate(texts)
                    return texts
            return Route()
    W.Translators = lt.Translators = InThread
trace = open(os.environ["VOXCAP_TRACE"], "a", buffering=1)
sent = {}
submit, result = lt.LineTranslation._submit, lt.LineTranslation._result
def _submit(self, line):
    sent.setdefault((line.stream_id, line.line_id), time.monotonic())
    submit(self, line)
def _result(self, r):
    t0 = sent.get((r.line.stream_id, r.line.line_id))
    if t0 is not None and not r.line.refined:
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        trace.write(json.dumps({"ms": (time.monotonic() - t0) * 1000,
                                "translated": bool(r.translation), "nice": nice}) + "\n")
    result(self, r)
lt.LineTranslation._submit, lt.LineTranslation._result = _submit, _result
from voxcap.cli import main
sys.exit(main(sys.argv[1:]))
'''


def _package(models: Path, tiny: bool) -> None:
    from support.tiny_translation import OPUS_MT_BASE, TINY, make_package

    folder = models / "fr_en"
    if not (folder / "model" / "model.bin").is_file():
        text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(Path("docs/guide").glob("*.md")))
        make_package(folder, "fr", "en", shape=TINY if tiny else OPUS_MT_BASE,
                     corpus_text="" if tiny else text, quantization="int8")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else 0.0


def _spy(pid: int, out: Path) -> subprocess.Popen:
    """py-spy on the voxcap process: every thread, idle ones too, as collapsed stacks."""
    here = Path(sys.executable).with_name("py-spy")  # a venv's, else the PATH's
    cmd = [str(here) if here.exists() else "py-spy", "record", "--pid", str(pid), "--rate", "200",
           "--threads", "--idle", "--nonblocking", "--format", "raw", "-o", str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _spy_summary(path: Path, top: int = 8) -> None:
    """Per thread, the innermost frames it was seen in most (samples): where time went."""
    if not path.exists():
        print(f"  (no py-spy record at {path})")
        return
    per: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or len(frames) < 2:
            continue
        leaf = frames[-1]
        per.setdefault(frames[0], {}).setdefault(leaf, 0)
        per[frames[0]][leaf] += int(count)
    for thread, leaves in per.items():
        total = sum(leaves.values())
        print(f"  {thread}: {total} samples")
        for leaf, n in sorted(leaves.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {n / total:6.1%}  {leaf}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--cores", default="0-3", help="taskset's CPU list for voxcap and vLLM")
    ap.add_argument("--model", default=os.path.expandvars("$VOXCAP_GPU_WORK/rsmodel"))
    ap.add_argument("--work", default=os.path.expandvars("$VOXCAP_GPU_WORK/translate"))
    ap.add_argument("--extra", default="", help="more transcribe flags (e.g. \"--eager\")")
    ap.add_argument("--runs", default="off,process,thread",
                    help="off, process (the app's way), thread (the way before), comma-separated")
    ap.add_argument("--spy", action="store_true", help="py-spy record each run's voxcap process")
    ap.add_argument("--tiny-translation", action="store_true",
                    help="the tests' tiny Marian model (~1 ms a line): the translation path's "
                         "cost without the model's")
    args = ap.parse_args()
    work = Path(args.work)
    data = work / "data"
    (data / "translation-models").mkdir(parents=True, exist_ok=True)
    _package(data / "translation-models", args.tiny_translation)
    audio = work / "speech.wav"
    import soundfile as sf

    from voxcap.commands.bench import speech_like
    from voxcap.framing import SAMPLE_RATE
    sf.write(audio, speech_like(args.seconds, seed=3), SAMPLE_RATE)
    env = dict(os.environ, VOXCAP_DATA_DIR=str(data), VOXCAP_STATE_DIR=str(work / "state"))
    results = {}
    for mode in args.runs.split(","):
        trace = work / f"trace-{mode}.jsonl"
        trace.unlink(missing_ok=True)
        cmd = ["taskset", "-c", args.cores, sys.executable, "-c", LAUNCHER, "transcribe", str(audio),
               "--model", args.model, "--dummy-weights", "--realtime", "--no-journal",
               *args.extra.split(), *(["--translate-to", "en"] if mode != "off" else [])]
        run_env = dict(env, VOXCAP_TRACE=str(trace))
        if mode == "thread":
            run_env["VOXCAP_TRANSLATE_IN_THREAD"] = "1"
        proc = subprocess.Popen(cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        spy = _spy(proc.pid, work / f"spy-{mode}.txt") if args.spy else None
        text, _ = proc.communicate(timeout=900)
        if spy is not None:
            spy.wait(30)
        (work / f"transcribe-{mode}.log").write_text(text)
        done = next((ln for ln in text.splitlines() if ln.startswith("done:")), "")
        step = re.search(r"step p50 ([\d.]+) ms p95 ([\d.]+) ms", done)
        figures = {"step_p50_ms": float(step.group(1)), "step_p95_ms": float(step.group(2))} \
            if step else {}
        lag = re.search(r"caption lag p50 ([\d.]+) s p95 ([\d.]+) s", done)
        if lag:
            figures.update(lag_p50_s=float(lag.group(1)), lag_p95_s=float(lag.group(2)))
        rows = [json.loads(ln) for ln in trace.read_text().splitlines()] if trace.exists() else []
        ms = [r["ms"] for r in rows if r["translated"]]
        figures.update(exit=proc.returncode, lines_translated=len(ms),
                       worker_nice=sorted({r.get("nice") for r in rows}),
                       translation_p50_ms=round(_pct(ms, 50), 1), translation_p95_ms=round(_pct(ms, 95), 1),
                       shown=text.count("[fr→en]"))
        results[mode] = figures
        print(mode, json.dumps(figures), flush=True)
        if spy is not None:
            _spy_summary(work / f"spy-{mode}.txt")
        if proc.returncode != 0:
            print(text[-3000:])
    print(json.dumps({"cores": args.cores, "seconds": args.seconds, **results}))


if __name__ == "__main__":
    main()
