"""Issue 52's working day, walked again on the real app as a hard-of-hearing office worker walks
it: `voxcap gui` on the tiny CPU model (random weights), a private PulseAudio (support/pulse.py),
Xvfb, and a screen reader's view over AT-SPI (support/atspi.py); every step by keyboard (XTest)
and read back through AT-SPI. Not a test: it measures and prints, in one run,

- the cue lengths of a "Both" export (SRT and VTT) of a two-speaker conversation (espeak-ng
  into the virtual speaker and the virtual microphone);
- F6 to "Pausing…" and to "Paused", as the screen reader hears them;
- Up Up in the Source box while captioning "Both": what the overlay, settings.json and the
  session's recorded sources say;
- audio lost at playback start, for system audio and for one application's sound (the
  captures' own counters, in their "stopped after" and loss notices);
- Ctrl+Q: key to every process gone;
- SIGTERM to the process group (a logout): what is left in TMPDIR.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/day_walk.py [--shots DIR] [--keep]

Two engine starts of the tiny model (about a minute each on 2 idle cores); the walk itself
about 2 minutes. Figures: docs/perf/day-walk.md."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.app_walk import WalkedApp, labels, node, processes_of, until, walk_env
from support.atspi import AtspiBus, Listener, walk
from support.pulse import PulseServer, speech_wav
from support.xvfb import Xvfb

from voxcap.engine.model.tiny import write_tiny_model

AT = "at:300,300"  # the pointer on the main window: the keyboard's window without a window manager
TURNS = (  # (who, words): "Them" plays on the speaker, "You" speaks into the microphone
    ("them", "Good morning, thanks for joining. Shall we go through the budget first?"),
    ("you", "Yes please. I have the numbers for March here."),
    ("them", "Great. Travel was over by twelve percent, mostly the conference in May."),
    ("you", "Right, and the software licences came in under plan."),
    ("them", "So overall we are on track. Anything else before we move on?"),
    ("you", "No, that covers it. Let us look at the hiring plan."),
)
LOSS = re.compile(r"stopped after|sound lost|lost so far|cut off|fell behind")  # the captures' words


class App(WalkedApp):
    """One `voxcap gui` in a process group of its own, its log and its walk."""

    def __init__(self, home: Path, tmpdir: Path, model: Path, env: dict, bus: AtspiBus, x: Xvfb,
                 shots: Path) -> None:
        super().__init__([sys.executable, "-m", "voxcap.cli", "gui", "--model", str(model), "--eager"],
                         dict(env, TMPDIR=str(tmpdir)), home, (home / "gui-output.txt").open("a"),
                         bus, x, shots)

    def keys(self, *combos: str) -> list[float]:
        return self.bus.keys(AT, *combos)

    def gone(self, timeout: float = 30) -> tuple[float | None, float | None, list[str]]:
        """When (time.time()) the app's own process ended and when no process of its group was
        left (None: not within ``timeout``, then what was left, killed)."""
        t0, app_gone = time.monotonic(), None
        while time.monotonic() - t0 < timeout:
            # poll() also reaps it: unreaped, the app stays in /proc and looks left over
            if app_gone is None and self.proc.poll() is not None:
                app_gone = time.time()
            if not processes_of(self.proc.pid):
                return app_gone or time.time(), time.time(), []
            time.sleep(0.02)
        left = [_cmdline(pid) for pid in processes_of(self.proc.pid)]
        os.killpg(self.proc.pid, signal.SIGKILL)
        return app_gone, None, left


def _cmdline(pid: int) -> str:
    try:
        return f"{pid} " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return str(pid)


def heard(listener: Listener, text: str, since: float, timeout: float) -> float | None:
    """When the screen reader first heard ``text`` (a name change or an announcement) after
    ``since`` (time.time())."""
    ev = listener.wait_for(lambda e: e.get("at", 0) >= since and text in f"{e.get('name')} {e.get('data')}",
                           timeout)
    return ev["at"] if ev else None


def cue_lengths(path: Path) -> list[float]:
    stamp = r"(\d+):(\d\d):(\d\d)[.,](\d{3})"
    stamps = re.findall(f"{stamp} --> {stamp}", path.read_text())

    def s(h: str, m: str, sec: str, ms: str) -> float:
        return int(h) * 3600 + int(m) * 60 + int(sec) + int(ms) / 1000
    return [s(*t[4:]) - s(*t[:4]) for t in stamps]


def cue_figures(path: Path) -> str:
    c = cue_lengths(path)
    if not c:
        return f"{path.suffix}: no cues"
    return (f"{path.suffix[1:].upper()}: {len(c)} cues, {sum(x < 0.7 for x in c)} under 0.7 s, "
            f"{sum(x < 1.0 for x in c)} under 1 s, min {min(c):.2f} s, p50 {statistics.median(c):.2f} s")


def voxcap(env: dict, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", *args], env=env, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"voxcap {' '.join(args)}: {r.stderr[-2000:]}")
    return r.stdout


def conversation(app: App, pulse: PulseServer, wavs: list[tuple[str, Path]], env: dict,
                 out: Path, listener: Listener) -> dict:
    """F5 in "Both", the conversation, F6 (timed), F6, F5; the session exported."""
    w = app.walk
    app.keys("F5")
    app.wait_state("Captioning")
    for who, wav in wavs:
        pulse.play(wav, sink="vspeaker" if who == "them" else "micfeed")
        time.sleep(0.3)
    until(w.tree, lambda t: any("Them:" in str(n.get("text")) and "You:" in str(n.get("text"))
                                for n in walk(t)), 120, "both speakers in the history")
    w.shot("both-captioning")
    (pressed,) = app.keys("F6")
    pausing, paused = heard(listener, "Pausing", pressed, 30), heard(listener, "Paused", pressed, 60)
    app.wait_state("Paused")
    w.shot("paused")
    app.keys("F6")
    app.wait_state("Captioning")
    app.keys("F5")
    app.wait_state("Not captioning")
    names = [out / f"both.{ext}" for ext in ("srt", "vtt", "txt")]
    voxcap(env, "export", "last", *[a for p in names for a in ("-o", str(p))])
    return {"pausing_ms": None if pausing is None else (pausing - pressed) * 1000,
            "paused_ms": None if paused is None else (paused - pressed) * 1000,
            "cues": [cue_figures(p) for p in names[:2]]}


def switch_up_up(app: App, home: Path, env: dict) -> dict:
    """Captioning "Both", Up Up in the Source box (Alt+O): what is captioned at the end."""
    w = app.walk
    app.keys("F5")
    app.wait_state("Captioning")
    app.keys("alt+o", "Up", "Up")
    time.sleep(1.0)
    app.wait_state("Captioning", 60)
    time.sleep(3.0)  # any switch still queued has run
    tree = w.tree()
    w.shot("after-up-up")
    shown = {"source box": [f"{n.get('name')}: {n.get('text') or n.get('value') or ''}".strip()
                            for n in walk(tree) if "combo" in str(n.get("role"))][:1],
             "streams": labels(tree).get("Streams from", ""),
             "overlay": _overlay_says(tree)}
    setting = json.loads((home / "config" / "settings.json").read_text()).get("source")
    return {"shown": shown, "settings.json": setting}


def _overlay_says(tree: dict) -> list[str]:
    """Everything the overlay window says (its names, descriptions and texts)."""
    window = next((w for w in tree.get("children", ()) if any(
        n.get("name") == "Live captions" for n in walk(w))), {})
    said = [str(n.get(k)) for n in walk(window) for k in ("name", "description", "text") if n.get(k)]
    return list(dict.fromkeys(said))


def app_source(app: App, pulse: PulseServer, wav: Path) -> None:
    """System audio is captioned (after Up Up): paplay plays twice (system audio's playback
    starts); then its own sound is chosen (End, Up: "paplay (application)") and it plays twice
    more (the application source's playback starts)."""
    w = app.walk
    for _ in range(2):
        pulse.play(wav)
        time.sleep(2.0)
    player = pulse.play(wav, wait=False)
    until(w.tree, lambda t: node(t, "list item", "paplay") is not None
          or "(application)" in json.dumps(t), 30, "paplay listed as a source")
    app.keys("alt+o", "End", "Up")
    player.wait(60)
    app.wait_state("Captioning", 60)
    time.sleep(2.0)
    for _ in range(2):
        pulse.play(wav)
        time.sleep(2.0)
    w.shot("app-source")
    app.keys("F5")
    app.wait_state("Not captioning")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", type=Path, default=None, help="folder for the screenshots")
    ap.add_argument("--keep", action="store_true", help="keep the walk's folder")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="vx-day-", dir="/tmp"))  # short: vLLM's socket paths
    shots = args.shots or root / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    home, tmpdir = root / "home", root / "t"
    tmpdir.mkdir(parents=True)
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.json").write_text(json.dumps({"source": "both"}))
    model = write_tiny_model(root / "model", max_len=4096, weights_seed=0)
    wavs = [(who, speech_wav(root / f"turn{i}.wav", words, rate=None if who == "them" else 44100))
            for i, (who, words) in enumerate(TURNS)]
    pulse = PulseServer(root / "pulse").start(apply_env=False)
    try:
        with Xvfb(1400, 900) as x, AtspiBus() as bus:
            x.start_compositor()
            env = walk_env(x, bus, pulse.server, home, drop=("TMPDIR",))
            walk_day(env, home, tmpdir, model, bus, x, shots, pulse, wavs, root)
    finally:
        pulse.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"screenshots: {shots}")
    return 0


def ended(gone: tuple[float | None, float | None, list[str]], since: float) -> str:
    app_at, all_at, left = gone
    app = "still running" if app_at is None else f"app gone {app_at - since:.2f} s"
    rest = (f"every process gone {all_at - since:.2f} s" if all_at is not None
            else f"still running (killed): {left}")
    return f"{app}, {rest} after it"


def walk_day(env, home, tmpdir, model, bus, x, shots, pulse, wavs, root) -> None:
    listener = bus.listen()
    app = App(home, tmpdir, model, env, bus, x, shots)
    try:
        print(f"engine ready after {app.wait_ready():.0f} s")
        app.walk.shot("ready")
        talk = conversation(app, pulse, wavs, env, root, listener)
        print("Both export:", "; ".join(talk["cues"]))
        print(f"F6 -> 'Pausing…' {talk['pausing_ms']:.0f} ms, -> 'Paused' {talk['paused_ms']:.0f} ms"
              if talk["pausing_ms"] is not None and talk["paused_ms"] is not None else f"F6: {talk}")
        switched = switch_up_up(app, home, env)
        app_source(app, pulse, wavs[0][1])
        sessions = voxcap(env, "sessions")
        print("Up Up from Both:", json.dumps(switched, ensure_ascii=False))
        print("sessions:\n" + "\n".join(sessions.splitlines()[:8]))
        listener.wait_for(lambda ev: False, 1.0)  # every event heard so far, read
        losses = list(dict.fromkeys(str(ev.get(k)) for ev in listener.events for k in ("name", "data")
                                    if LOSS.search(str(ev.get(k)))))
        print("capture losses heard:\n  " + "\n  ".join(losses or ["none"]))
        (pressed,) = app.keys("ctrl+q")
        print("Ctrl+Q:", ended(app.gone(), pressed))
        app = App(home, tmpdir, model, env, bus, x, shots)
        app.wait_ready()
        app.keys("F5")
        app.wait_state("Captioning")
        sent = time.time()
        os.killpg(app.proc.pid, signal.SIGTERM)
        print("SIGTERM to the group:", ended(app.gone(), sent))
        left = sorted(str(p.relative_to(tmpdir)) for p in tmpdir.rglob("*"))
        print(f"left in TMPDIR: {left or 'nothing'}")
    finally:
        if app.proc.poll() is None:
            os.killpg(app.proc.pid, signal.SIGKILL)
        listener.stop()


if __name__ == "__main__":
    sys.exit(main())
