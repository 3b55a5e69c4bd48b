"""Echo cancellation for "Both": how much of the speakers' sound leaves the "You" stream, and what
happens to the person at the microphone, on a private headless sound server.

The room is simulated (tests/support/echo_path.py): the virtual speaker's monitor is looped into
the virtual microphone at -6 dB with a 50 ms delay (module-loopback), and a separate near talker
plays into the microphone. voxcap captures the microphone as "You" paired with system audio
("Them"), once with echo cancellation off and once on (module-echo-cancel, WebRTC), each time
after --warmup sentences of "Them" to let the canceller adapt. It prints:

- echo reduction: level of "You" while only "Them" speaks, off minus on (dB; target >= 20);
- near-talker change: level of "You" while only the near talker speaks, on minus off (dB;
  target within +-3);
- double talk (no target, for information): the near talker's level in "You" while "Them"
  speaks too, on minus off (dB; a canceller that ducks the microphone while the speakers play
  loses the user's words then).

    .venv/bin/python -m benchmarks.echo_cancel_bench [--server pulseaudio|pipewire|both]
        [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from tests.support.echo_path import AcousticPath, measure
from tests.support.pulse import PulseServer, speech_wav

WARMUP = ["Good morning everyone, thank you for joining the call today.",
          "Before we start, please mute your microphones if you are not speaking."]
FAR = "The quarterly numbers are better than expected in every region we track."
NEAR = "Could you please repeat the last number, I did not hear it clearly."


def run_server(kind: str, repeats: int, warmup: int, tmp: Path) -> dict:
    if kind == "pipewire":
        from tests.support.pipewire import PipeWireServer

        server = PipeWireServer().start()
    else:
        server = PulseServer().start()
    try:
        warm = [speech_wav(tmp / f"warm{i}.wav", WARMUP[i % len(WARMUP)]) for i in range(warmup)]
        far = speech_wav(tmp / "far.wav", FAR)
        near = speech_wav(tmp / "near.wav", NEAR, rate=44100)
        path = AcousticPath(server).start()
        reductions, changes, doubles = [], [], []
        try:
            for _ in range(repeats):
                off = measure(server, "off", warm, far, near, double_talk=True)
                on = measure(server, "on", warm, far, near, double_talk=True)
                if not on.echo_active:
                    raise RuntimeError("the echo canceller did not load")
                reductions.append(off.db(off.echo_rms) - on.db(on.echo_rms))
                changes.append(on.db(on.near_rms) - off.db(off.near_rms))
                doubles.append(on.db(on.double_gain) - off.db(off.double_gain))
                print(f"  {kind}: echo {off.db(off.echo_rms):.1f} -> {on.db(on.echo_rms):.1f} dBFS, "
                      f"near {off.db(off.near_rms):.1f} -> {on.db(on.near_rms):.1f} dBFS, "
                      f"near while both talk {doubles[-1]:+.1f} dB", flush=True)
        finally:
            path.stop()
        info = server.pactl("info")
        name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                     if line.startswith("Server Name")), kind)
        return {"server": name, "repeats": repeats, "warmup_sentences": warmup,
                "echo_reduction_db": reductions, "near_change_db": changes,
                "echo_reduction_db_median": statistics.median(reductions),
                "echo_reduction_db_min": min(reductions),
                "near_change_db_worst": max(changes, key=abs),
                "double_talk_near_change_db": doubles,
                "double_talk_near_change_db_median": statistics.median(doubles)}
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", choices=("pulseaudio", "pipewire", "both"), default="both")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="sentences of 'Them' before measuring")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    kinds = ["pulseaudio", "pipewire"] if args.server == "both" else [args.server]
    results = []
    with tempfile.TemporaryDirectory(prefix="voxcap-echo-bench-") as tmp:
        for kind in kinds:
            results.append(run_server(kind, args.repeats, args.warmup, Path(tmp)))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("\nEcho cancellation (simulated room: speaker -> mic at -6 dB, 50 ms; targets: echo "
          "reduced >= 20 dB, near talker within 3 dB)")
    for r in results:
        ok = "meets" if r["echo_reduction_db_min"] >= 20 and abs(r["near_change_db_worst"]) <= 3 else "MISSES"
        print(f"  {r['server']}: echo reduction median {r['echo_reduction_db_median']:.1f} dB "
              f"(min {r['echo_reduction_db_min']:.1f}), near-talker change worst "
              f"{r['near_change_db_worst']:+.1f} dB over {r['repeats']} runs: {ok} the targets; "
              f"near talker while both talk {r['double_talk_near_change_db_median']:+.1f} dB (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
