"""Issue 48's "Done when", walked on the real app as a deaf user walks it, and measured in the same
run: `voxcap gui` on the tiny CPU Voxtral model (random weights), a private PulseAudio
(support/pulse.py) with French espeak-ng speech played into the system output, Xvfb, a screen
reader's view over AT-SPI (support/atspi.py), the tests' tiny fr-en translation model served from
a loopback index (support/model_index.py), the caption page in headless Chromium
(support/browser.py), OBS's closed captions set to carry the translation (support/fake_obs.py:
obs-websocket 5 as OBS Studio speaks it, the captions it is sent recorded with their time).
Every step in the app by keyboard (XTest). Not a test: it prints.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/translate_walk.py [--shots DIR] [--keep]

Steps: no translation model installed; captions untranslated (the "off" phase); Settings ->
Translation by keyboard: English; the first-use offer: French, Download (the model loaded at
once); captions with their translations (the "on" phase) in the overlay and history; the caption
page switched original / translation / both; exports SRT/VTT/TXT with both; the journal; the
model removed in Settings by keyboard (dropped at once; captions go on with the notice, no
offer); Ctrl+Q; model.bin truncated and
captioning restarted (one line, captions go on); the index unreachable (one line).

The tiny speech model's captions are random text in no language, so the app's line-language
detector is told to hear French (``LanguageDetector.detect`` answers "fr", confidence 1, in the
app's process only: the launcher below); everything after it (worker, model, displays, record)
is the app's own.

Figures (the launcher records them in the app's process; wall clock, as TextDelta.produced_at):
- a line's end as the engine reports it: ``produced_at`` of the delta whose update finished the
  line (``CaptionLine.final``; a line finished by the stream's end: when that was shown);
- its translation painted in the overlay: the end of the first paintEvent after
  ``add_translation`` (only lines still on the overlay are painted; all are counted);
- its translation on the caption page: Chromium's clock when the translation's element was added
  (a MutationObserver), same machine and clock;
- its translation sent to OBS: when the stand-in got it (the line whose translation ends with
  the caption's text, ended last before it);
- caption latency: the app's own delta -> painted (``VoxcapApp._painted``), translation off
  (before English is chosen) and on, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.app_walk import WalkedApp, node, until, walk_env
from support.atspi import AtspiBus, walk
from support.fake_obs import ObsImpostor
from support.model_index import ModelIndexServer
from support.pulse import PulseServer
from support.tiny_translation import make_archive, make_package
from support.xvfb import Xvfb

from benchmarks.lib.percentiles import percentile
from voxcap.engine.model.tiny import write_tiny_model

AT = "at:300,300"  # on the main window; the overlay, at the bottom of the screen, below it
OFFER_AT = "at:600,260"  # on the first-use offer (over the main window's history)
SPEECH = ("Bonjour à tous et merci d'être venus. Nous allons parler du budget de l'année. "
          "Les dépenses de voyage ont augmenté de douze pour cent. Le reste est conforme au plan.")

LAUNCHER = r'''
import json, os, runpy, sys, time
trace = open(os.environ["VOXCAP_WALK_TRACE"], "a", buffering=1)
def rec(**kw):
    trace.write(json.dumps(kw) + "\n")
from voxcap.translate import detect
def assumed(self, text, previous=""):
    return detect.LanguageGuess(os.environ["VOXCAP_WALK_ASSUME"], 1.0)
detect.LanguageDetector.detect = assumed
from voxcap.gui import application
from voxcap.gui.overlay import window as ow
show = application.VoxcapApp._show
last = {}  # stream -> its line in progress
def _show(self, updates, delta):
    at = delta.produced_at if delta is not None else time.time()
    for u in updates:  # a line ends when the next of its stream starts, or is made final
        line = u.line
        prev = last.get(line.stream_id)
        if u.new_line and prev is not None and prev.line_id != line.line_id:
            rec(kind="final", stream=prev.stream_id, start=prev.start_s, at=at, text=prev.text)
        if line.final:
            rec(kind="final", stream=line.stream_id, start=line.start_s, at=at, text=line.text)
            last.pop(line.stream_id, None)
        else:
            last[line.stream_id] = line
    show(self, updates, delta)
application.VoxcapApp._show = _show
painted = application.VoxcapApp._painted
def _painted(self, stamps, at):
    on = bool(self.settings.translation.translate_to)
    for sid, produced, end in stamps:
        rec(kind="paint", lag=at - produced, translating=on)
    painted(self, stamps, at)
application.VoxcapApp._painted = _painted
add_translation = ow.CaptionOverlay.add_translation
def _add_translation(self, ev):
    if ev.translation and not ev.refined:
        self.__dict__.setdefault("_walk_tr", []).append((ev.stream_id, ev.start_s, ev.translation,
                                                          time.time()))
    add_translation(self, ev)
ow.CaptionOverlay.add_translation = _add_translation
paint = ow.CaptionOverlay.paintEvent
def _paint(self, e):
    paint(self, e)
    now = time.time()
    for sid, start, tr, got in self.__dict__.pop("_walk_tr", []):
        rec(kind="tr_painted", stream=sid, start=start, got=got, at=now, translation=tr)
ow.CaptionOverlay.paintEvent = _paint
sys.argv = ["voxcap", *sys.argv[1:]]
runpy.run_module("voxcap.cli", run_name="__main__")
'''

PAGE_WATCH = """
window.walkTr = [];
new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes) {
  if (n.nodeType === 1) { const t = n.classList.contains('tr') ? [n] : [...n.querySelectorAll('.tr')];
    for (const e of t) window.walkTr.push({id: e.parentNode.dataset.id, text: e.textContent,
      original: e.parentNode.firstChild.textContent, at: Date.now() / 1000}); } } })
  .observe(document.getElementById('captions'), {childList: true, subtree: true});
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stamped(list):
    """The captions OBS's stand-in is sent, each with when it came (time.time())."""

    def append(self, text: str) -> None:
        super().append((time.time(), text))


class App(WalkedApp):
    def __init__(self, home: Path, model: Path, env: dict, bus: AtspiBus, x: Xvfb, shots: Path,
                 tag: str) -> None:
        super().__init__([sys.executable, "-c", LAUNCHER, "gui", "--model", str(model), "--eager"],
                         env, home, (home / f"gui-{tag}.txt").open("a"), bus, x, shots)

    def keys(self, *combos: str, main: bool = True, at: str = AT) -> None:
        """Keys into the window under ``at`` (the pointer put there, the focus given to the
        window under it: no window manager), or with ``main`` False into the window that has
        the focus (a dialog just opened)."""
        self.bus.keys(*((at,) if main else ()), *combos)

    def history(self) -> str:
        return "\n".join(str(n.get("text") or "") for n in walk(self.walk.tree())
                         if "Them:" in str(n.get("text") or ""))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.keys("ctrl+q")
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


def records(trace: Path) -> list[dict]:
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]


def figures(trace: Path, page: list[dict], obs: list[tuple[float, str]]) -> dict:
    recs = records(trace)
    ends: dict = {}
    by_text: dict = {}
    for r in recs:
        if r["kind"] == "final":
            ends.setdefault((r["stream"], round(r["start"], 3)), r["at"])
            by_text.setdefault(r["text"].strip(), []).append(r["at"])
    overlay = []
    for r in recs:
        if r["kind"] == "tr_painted":
            end = ends.get((r["stream"], round(r["start"], 3)))
            if end is not None:
                overlay.append(r["at"] - end)
    first_on_page: dict = {}  # a line's first translation on the page (re-renders after)
    for p in page:
        first_on_page.setdefault(p["id"], p)
    on_page = []  # the same speech is played in both phases: its line's latest end before it
    for p in first_on_page.values():
        before = [at for at in by_text.get(p["original"].strip(), ()) if at <= p["at"]]
        if before:
            on_page.append(p["at"] - max(before))
    # OBS gets each line's translation (its last CAPTION_CHARS) once the line has ended: the
    # line whose translation ends so, ended last before it came
    painted = [r for r in recs if r["kind"] == "tr_painted"]
    to_obs = []
    for at, text in obs:
        before = [ends[key] for r in painted if r["translation"].endswith(text)
                  and (key := (r["stream"], round(r["start"], 3))) in ends and ends[key] <= at]
        if before:
            to_obs.append(at - max(before))
    lag = {on: [r["lag"] for r in recs if r["kind"] == "paint" and r["translating"] == on]
           for on in (False, True)}

    def summary(xs: list[float]) -> dict:
        ms = [x * 1000 for x in xs]
        return {"n": len(ms), "p50_ms": percentile(ms, 50, digits=1),
                "p95_ms": percentile(ms, 95, digits=1),
                "max_ms": round(max(ms), 1) if ms else None}
    return {"line_end_to_translation_painted_overlay": summary(overlay),
            "line_end_to_translation_on_caption_page": summary(on_page),
            "line_end_to_translation_sent_to_obs": summary(to_obs), "obs_captions": len(obs),
            "delta_to_painted_translation_off": summary(lag[False]),
            "delta_to_painted_translation_on": summary(lag[True]),
            "lines_finished": len(ends), "page_lines_translated": len(first_on_page),
            "page_lines_matched": len(on_page)}


def say(pulse: PulseServer, wav: Path, times: int = 1) -> None:
    for _ in range(times):
        pulse.play(wav)
        time.sleep(1.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", type=Path, default=None, help="folder for the screenshots")
    ap.add_argument("--keep", action="store_true", help="keep the walk's folder")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="vx-tr-", dir="/tmp"))
    shots = args.shots or root / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    home = root / "home"
    (home / "config").mkdir(parents=True)
    port = free_port()
    model = write_tiny_model(root / "model", max_len=4096, weights_seed=0)
    wav = root / "fr.wav"
    subprocess.run(["espeak-ng", "-v", "fr", "-s", "150", "-w", str(wav), SPEECH], check=True,
                   capture_output=True, timeout=60)
    package = make_package(root / "pk" / "fr_en", "fr", "en")
    archive = make_archive(package, root / "translate-fr_en-1_0.argosmodel")
    index = ModelIndexServer()
    index.add(archive, "fr", "en")
    obs = ObsImpostor().__enter__()  # obs-websocket 5, as OBS Studio speaks it
    obs.captions = Stamped()
    (home / "config" / "settings.json").write_text(json.dumps(
        {"source": "system", "share": {"enabled": True, "port": port, "obs": True,
                                       "obs_url": obs.url, "obs_text": "translation"}}))
    trace = root / "trace.jsonl"
    pulse = PulseServer(root / "pulse").start(apply_env=False)
    try:
        with Xvfb(1400, 1100) as x, AtspiBus() as bus:
            x.start_compositor()
            env = walk_env(x, bus, pulse.server, home, VOXCAP_TRANSLATE_INDEX=index.index_url,
                           VOXCAP_WALK_TRACE=str(trace), VOXCAP_WALK_ASSUME="fr")
            result = walk_translation(env, home, model, bus, x, shots, pulse, wav, port, root)
            result["obs"] = [text for _, text in obs.captions][:40]
            result["figures"] = figures(trace, result["page_tr"], list(obs.captions))
            print(json.dumps(result, indent=2, ensure_ascii=False))
            if args.out:
                args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    finally:
        pulse.stop()
        index.close()
        obs.__exit__(None, None, None)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"screenshots: {shots}; folder {root}")
    return 0


def translation_tab(app: App) -> None:
    """Ctrl+, then Ctrl+Tab to the Translation tab (Ctrl+PageDown is taken by the focused
    Engine box)."""
    app.keys("ctrl+comma")
    until(app.walk.tree, lambda t: node(t, "page tab", "Translation") is not None, 30, "Settings")
    for _ in range(6):
        tab = node(app.walk.tree(), "page tab", "Translation")
        if tab and "selected" in tab.get("states", ()):
            break
        app.keys("ctrl+Tab", main=False)
        time.sleep(0.5)


def choose_english(app: App) -> dict:
    """The Translation tab, Alt+T, "E" (English), Enter (OK)."""
    w = app.walk
    translation_tab(app)
    app.keys("alt+t", main=False)
    time.sleep(0.5)
    app.keys("e", main=False)
    time.sleep(0.5)
    tree = w.tree()
    controls = [f"{n.get('role')}: {n.get('name')!r}" for n in walk(tree)
                if n.get("role") in ("combo box", "push button", "check box", "list", "table",
                                     "spin button", "text")
                and "showing" in n.get("states", ())]
    w.shot("settings-translation-english")
    app.keys("Return", main=False)
    return {"settings_controls": controls}


def offer_and_download(app: App) -> dict:
    w = app.walk
    got = until(w.tree, lambda t: node(t, "dialog", "Translation model") is not None, 60,
                "the first-use offer")
    dialog = node(got, "dialog", "Translation model") or {}
    said = [f"{n.get('role')}: {n.get('name')!r}" for n in walk(dialog) if n.get("name")]
    # Without a window manager the offer, opened as Settings closes, is not given the focus
    # (it takes it only when voxcap is the active window, and nothing is active here): the
    # pointer on it gives it the focus, as a click would on a desktop
    app.keys("alt+t", at=OFFER_AT)
    time.sleep(0.5)
    app.keys("f", main=False)
    time.sleep(1.0)
    w.shot("offer-french")
    app.keys("alt+d", main=False)
    until(w.tree, lambda t: node(t, "push button", "Close") is not None, 120,
          "the download's end")
    w.shot("offer-downloaded")
    done = [f"{n.get('role')}: {n.get('name')!r}" for n in walk(node(w.tree(), "dialog",
                                                                      "Translation model") or {})
            if n.get("name")]
    app.keys("Escape", main=False)
    return {"offer": said, "offer_after": done}


def loaded_after_install(app: App) -> dict:
    """The model installed through the offer is loaded at once (before any line needs it)."""
    got = until(app.text, lambda text: "loaded /" in text and "fr_en" in text, 60,
                "the installed model loaded")
    return {"loaded_at_install": [ln for ln in got.splitlines() if "loaded /" in ln][-1:]}


def remove_in_settings(app: App, home: Path, pulse: PulseServer, wav: Path, package: Path) -> dict:
    """Settings → Translation, Tab to "Remove French → English (fr-en)", Space, Alt+R (Remove):
    the model is dropped from the translation process at once, captions go on with the notice
    only (no offer of what was just removed). The package is put back for the failures' phase."""
    w = app.walk
    translation_tab(app)
    remove = "Remove French → English (fr-en)"
    reached = False
    for _ in range(40):  # Tab through the tab's controls (combo lists keep a stale "focused")
        reached = any(n.get("role") == "push button" and n.get("name") == remove
                      and "focused" in n.get("states", ()) for n in walk(w.tree()))
        if reached:
            break
        app.keys("Tab", main=False)
        time.sleep(0.3)
    out: dict = {"remove_reached_by_tab": reached}
    assert reached, f"Tab never reached {remove!r}"
    app.keys("space", main=False)
    box = until(w.tree, lambda t: node(t, "dialog", "Remove translation model") is not None or
                node(t, "alert", "Remove translation model") is not None, 30, "Remove's question")
    out["remove_question"] = [n.get("name") for n in walk(box) if n.get("role") == "label"
                              and "Remove the" in str(n.get("name"))][:1]
    w.shot("remove-question")
    app.keys("alt+r", main=False)
    until(app.text, lambda text: "dropped /" in text, 30, "the removed model dropped")
    out["dropped"] = [ln for ln in app.text().splitlines() if "dropped /" in ln][-1:]
    w.shot("removed")
    app.keys("Escape", main=False)  # Settings closed: the removal is done already
    time.sleep(1)
    app.keys("F5")
    app.wait_state("Captioning")
    say(pulse, wav)
    time.sleep(4)
    tree = w.tree()
    out["offer_after_remove"] = node(tree, "dialog", "Translation model") is not None
    out["notice_after_remove"] = [n.get("name") for n in walk(tree) if n.get("role") == "label"
                                  and "not installed" in str(n.get("name"))][:1]
    w.shot("after-remove")
    app.keys("F5")
    app.wait_state("Not captioning")
    shutil.copytree(package, home / "data" / "translation-models" / "fr_en")
    return out


def open_page(port: int):
    """The caption page in Chromium, watching for translations, before captioning starts (open
    in both phases: the same load with translation off and on)."""
    from support.browser import start_chromium, wait_for

    driver = start_chromium(1000, 700)
    driver.get(f"http://127.0.0.1:{port}/")
    wait_for(lambda: driver.find_element("id", "status").get_attribute("data-state")
             == "connected", what="the page connected")
    driver.execute_script(PAGE_WATCH)
    return driver


def caption_page(driver, app: App, pulse: PulseServer, wav: Path, shots: Path) -> tuple[dict, list]:
    """Captions with translation on; the page switched both / original / translation."""
    from support.browser import wait_for

    out: dict = {}
    app.keys("F5")
    app.wait_state("Captioning")
    say(pulse, wav, 1)
    wait_for(lambda: driver.execute_script("return window.walkTr.length") >= 2, 120,
             what="translations on the page")
    for _ in range(3):  # the overlay while lines end: a finished line's translation on it
        app.walk.shot("overlay-translated")
        time.sleep(1.0)
    say(pulse, wav, 2)
    time.sleep(4)
    page_tr = driver.execute_script("return window.walkTr")
    for mode in ("both", "original", "translation"):
        driver.execute_script(
            "const s = document.getElementById('show'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('change'));", mode)
        time.sleep(1.0)
        driver.get_screenshot_as_file(str(shots / f"page-{mode}.png"))
        out[mode] = driver.execute_script(
            "return [...document.querySelectorAll('#captions .line')].slice(-2)"
            ".map(e => e.textContent)")
    return out, page_tr


def walk_translation(env, home, model, bus, x, shots, pulse, wav, port, root) -> dict:
    result: dict = {}
    listener = bus.listen()
    app = App(home, model, env, bus, x, shots, "first")
    try:
        result["engine_ready_s"] = round(app.wait_ready())
        app.walk.shot("ready-no-model")
        driver = open_page(port)
        try:
            # the "off" phase: captions as before translation, the page open
            app.keys("F5")
            app.wait_state("Captioning")
            say(pulse, wav, 3)
            time.sleep(3)
            app.keys("F5")
            app.wait_state("Not captioning")
            result.update(choose_english(app))
            result.update(offer_and_download(app))
            result.update(loaded_after_install(app))
            page, result["page_tr"] = caption_page(driver, app, pulse, wav, shots)
        finally:
            from support.browser import quit_chromium
            quit_chromium(driver)
        result["page"] = page
        app.walk.shot("captions-translated")
        result["history"] = app.history()[-1500:]
        app.keys("F5")
        app.wait_state("Not captioning")
        listener.wait_for(lambda ev: False, 1.0)
        said = [str(ev.get("data")) for ev in listener.events
                if ev.get("type") == "object:announcement" and "English" in str(ev.get("data"))]
        result["announced"] = said[:3]
        translated = sorted(len(r["translation"]) for r in records(root / "trace.jsonl")
                            if r["kind"] == "tr_painted")
        heard = sorted(len(a.partition(": ")[2]) for a in said if a.startswith("Them, in English"))
        # the tiny model's translations are all alike: each line's once <=> the lengths match
        result["announced_once_each"] = {"translated": len(translated), "announced": len(heard),
                                         "lengths_match": translated == heard}
        names = [root / f"both.{ext}" for ext in ("srt", "vtt", "txt")]
        r = subprocess.run([sys.executable, "-m", "voxcap.cli", "export", "last", "--translation",
                            "both", *[a for p in names for a in ("-o", str(p))]], env=env,
                           capture_output=True, text=True, timeout=300)
        result["export_rc"] = r.returncode
        result["exports"] = {p.suffix: p.read_text()[:600] if p.exists() else r.stderr[-500:]
                             for p in names}
        journals = sorted((home / "data").rglob("*.jsonl"))
        result["journal"] = {str(j.relative_to(home)): [ln for ln in j.read_text().splitlines()
                                                        if "translation" in ln][:3]
                             for j in journals}
        result.update(remove_in_settings(app, home, pulse, wav, root / "pk" / "fr_en"))
        app.stop()
        result.update(failures(env, home, model, bus, x, shots, pulse, wav))
    finally:
        if app.proc.poll() is None:
            os.killpg(app.proc.pid, signal.SIGKILL)
        listener.stop()
    return result


def failures(env, home, model, bus, x, shots, pulse, wav) -> dict:
    """model.bin truncated, captioning started again; then the index unreachable (German)."""
    out: dict = {}
    bins = list((home / "data").rglob("model.bin"))
    for b in bins:
        with b.open("r+b") as f:
            f.truncate(b.stat().st_size // 2)
    out["truncated"] = [str(b.relative_to(home)) for b in bins]
    env = dict(env, VOXCAP_TRANSLATE_INDEX=f"http://127.0.0.1:{free_port()}/index.json")
    app = App(home, model, env, bus, x, shots, "second")
    try:
        app.wait_ready()
        app.keys("F5")
        app.wait_state("Captioning")
        say(pulse, wav)
        time.sleep(4)
        app.walk.shot("corrupt-model")
        tree = app.walk.tree()
        out["corrupt_notices"] = [n.get("name") for n in walk(tree) if n.get("role") == "label"
                                  and "translat" in str(n.get("name")).lower()]
        out["corrupt_history"] = app.history()[-400:]
        out["corrupt_log"] = [ln for ln in app.text().splitlines() if "ranslat" in ln][-5:]
        app.keys("F5")
        app.wait_state("Not captioning")
        # German: no model; the index cannot be reached
        translation_tab(app)
        app.keys("alt+t", "g", "Return", main=False)
        time.sleep(6)
        app.walk.shot("index-unreachable")
        tree = app.walk.tree()
        out["unreachable"] = [f"{n.get('role')}: {n.get('name')}" for n in walk(tree)
                              if n.get("role") == "label" and ("index" in str(n.get("name")).lower()
                                                               or "reach" in str(n.get("name")).lower()
                                                               or "download" in str(n.get("name")).lower())]
        out["unreachable_log"] = [ln for ln in app.text().splitlines()
                                  if "index" in ln.lower()][-4:]
    finally:
        app.stop()
        if app.proc.poll() is None:
            os.killpg(app.proc.pid, signal.SIGKILL)
    return out


if __name__ == "__main__":
    sys.exit(main())
