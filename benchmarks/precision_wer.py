"""What each precision costs in accuracy: word error rate of a set of speech files, transcribed
once per precision, against reference transcripts and against the bfloat16 transcript.

    python -m benchmarks.precision_wer --model DIR [--audio DIR]
        [--precisions bfloat16,fp8,fp8_kv,mxfp4,mxfp4_kv]
        [--dummy-weights] [--eager] [--out wer.json]

--audio DIR holds audio files (WAV/FLAC/OGG/MP3, any rate) with their reference text beside them
(NAME.txt), e.g. LibriSpeech test-clean utterances. Without it, a small set is spoken by
espeak-ng (a synthetic voice: its absolute WER says little, the differences between precisions
do). One engine per precision, each in a child process; every file is one stream through it,
fed as fast as the engine takes it. WER via jiwer (lower case, punctuation removed, on both
sides). On vLLM's CPU build only bfloat16 runs (as float32): FP8 and 4-bit (MXFP4) have no
working kernels there, and are refused in one line. The 4-bit choices' figures are what the UI's
"accuracy may be lower (not yet measured)" waits for.
With random weights (--dummy-weights) the text is gibberish: that only checks the plumbing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from voxcap.framing import SAMPLE_RATE

from .lib.processes import run_module

SENTENCES = (
    "the meeting starts at nine tomorrow morning in the small room",
    "please send me the slides before the lecture begins",
    "captions help people follow a conversation when the sound is poor",
    "she said the results would be ready by the end of the week",
    "turn left at the station and walk two hundred metres",
    "the weather will be cold and windy with rain in the evening",
)
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", text.lower()).split())


def spoken_set(folder: Path) -> Path:
    """SENTENCES spoken by espeak-ng into ``folder`` (NAME.wav + NAME.txt)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(SENTENCES):
        wav = folder / f"s{i:02d}.wav"
        subprocess.run(["espeak-ng", "-s", "150", "-w", str(wav), text], check=True,
                       capture_output=True)
        (folder / f"s{i:02d}.txt").write_text(text + "\n")
    return folder


def pairs(folder: Path) -> list[tuple[Path, str]]:
    out = []
    for f in sorted(folder.iterdir()):
        if f.suffix.lower() in AUDIO_SUFFIXES and f.with_suffix(".txt").is_file():
            out.append((f, f.with_suffix(".txt").read_text().strip()))
    if not out:
        raise SystemExit(f"no audio files with NAME.txt references in {folder}")
    return out


def transcribe_all(spec: dict) -> dict:
    """In a child process: one engine with this precision, every file one stream."""
    from voxcap.audio_file import read_all
    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings
    from voxcap.events import TextDelta

    texts: dict[str, list[str]] = {}
    ids: dict[str, str] = {}

    def on_event(ev):
        if isinstance(ev, TextDelta):
            texts.setdefault(ev.stream_id, []).append(ev.text)

    engine = LocalEngine(InProcessSettings(spec["model"], dummy_weights=spec["dummy"],
                                        precision=spec["precision"], max_streams=1,
                                        enforce_eager=spec["eager"]), on_event=on_event)
    engine.start()
    try:
        ready = engine.wait_ready()
        for path in spec["files"]:
            sid = engine.open_stream()
            ids[path] = sid
            audio = read_all(path)
            for i in range(0, audio.size, SAMPLE_RATE):  # a second at a time
                engine.push_audio(sid, audio[i:i + SAMPLE_RATE])
            engine.close_stream(sid)
            engine.wait_stream(sid, timeout=600)
    finally:
        engine.shutdown()
    return {"precision": ready.precision, "line": ready.precision_line,
            "texts": {p: "".join(texts.get(s, [])) for p, s in ids.items()}}


def run_child(spec: dict) -> dict:
    r = run_module("benchmarks.precision_wer", "--child", json.dumps(spec))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if lines and "error" in json.loads(lines[-1]):
        return json.loads(lines[-1])
    if r.returncode or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": tail[:300]}
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--audio", help="folder of audio files with NAME.txt references")
    ap.add_argument("--precisions", default="bfloat16,fp8,fp8_kv,mxfp4,mxfp4_kv")
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--out", default="")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        from voxcap.errors import VoxcapError

        try:
            print(json.dumps(transcribe_all(json.loads(args.child))), flush=True)
        except VoxcapError as exc:  # a precision this build or GPU cannot run: one line
            print(json.dumps({"error": exc.message}), flush=True)
        return 0
    if not args.model:
        ap.error("--model DIR is required")
    import jiwer

    folder = Path(args.audio) if args.audio else spoken_set(Path(tempfile.mkdtemp()) / "spoken")
    items = pairs(folder)
    refs = [normalise(t) for _, t in items]
    files = [str(p) for p, _ in items]
    results, base = [], None
    for precision in [p.strip() for p in args.precisions.split(",") if p.strip()]:
        print(f"precision_wer: {precision}: {len(files)} files...", file=sys.stderr, flush=True)
        got = run_child({"model": args.model, "dummy": args.dummy_weights, "eager": args.eager,
                         "precision": precision, "files": files})
        row = {"asked": precision, **{k: v for k, v in got.items() if k != "texts"}}
        if "texts" in got:
            hyps = [normalise(got["texts"][f]) for f in files]
            row["wer_vs_reference"] = round(jiwer.wer(refs, hyps), 4)
            if precision == "bfloat16":
                base = hyps
            elif base is not None:
                row["wer_vs_bfloat16"] = round(jiwer.wer(base, hyps), 4) if any(base) else None
            row["words"] = sum(len(h.split()) for h in hyps)
        results.append(row)
    print(f"{'precision':<12}{'ran as':<40}{'WER vs ref':>11}{'WER vs bf16':>12}{'words':>7}")
    for r in results:
        if "error" in r:
            print(f"{r['asked']:<12}failed: {r['error']}")
            continue
        vs = r.get("wer_vs_bfloat16")
        print(f"{r['asked']:<12}{r['precision']:<40}{r['wer_vs_reference']:>11.3f}"
              f"{(f'{vs:.3f}' if vs is not None else '-'):>12}{r['words']:>7}")
    if args.out:
        Path(args.out).write_text(json.dumps({"audio": str(folder), "files": len(files),
                                              "results": results}, indent=2))
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
