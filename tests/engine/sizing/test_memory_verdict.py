"""One verdict on GPU memory (engine/sizing/verdict.py), everywhere.

1. On a grid of simulated cards (size x free memory x streams x precision x GPU generation), the
   verdict says "fits" exactly where a choice's footprint plus the start-up peak is inside what
   may be counted (free, at most 95 % of the card), "does not fit" everywhere else, picks the
   most precise choice and the most streams that fit, and quotes the numbers it decided with.
2. The four places that show it agree, word for word, on GPUs a fake NVIDIA driver describes:
   the engine's start gate, `voxcap doctor`, Settings' model check and the first-run dialog.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest

from voxcap.engine.sizing import memory
from voxcap.engine.sizing.memory import Sizing
from voxcap.engine.sizing.precision import BY_NAME, ORDER, GpuFacts, supported
from voxcap.engine.sizing.verdict import verdict
from voxcap.errors import ConfigError
from voxcap.gui.settings.setting_words import for_the_app

GIB = memory.GIB
CARDS = (4, 6, 8, 11, 12, 16, 24)  # GB as sold
FREE_SHARES = (0.3, 0.55, 0.7, 0.8, 0.9, 0.97)  # of the card free when voxcap starts
GENERATIONS = ((7, 5), (8, 6), (8, 9))  # RTX 20, RTX 30, RTX 40


def _needs(name: str, streams: int, cc) -> int:
    """Free memory a choice needs to start, computed from the footprint, not by the verdict."""
    dtype_bytes = 2  # bfloat16 or float16 on every CUDA card
    fp = memory.footprint(None, streams, None, precision=BY_NAME[name], dtype_bytes=dtype_bytes)
    return fp.total_bytes + memory.start_peak_bytes(BY_NAME[name])


@pytest.mark.parametrize(("card", "cc"), list(itertools.product(CARDS, GENERATIONS)))
def test_the_verdict_on_a_grid_of_cards(card, cc):
    total = card * GIB
    seen = set()
    for share, streams, asked in itertools.product(FREE_SHARES, (1, 2), ("auto", *ORDER)):
        free = int(total * share)
        usable = min(free, int(total * 0.95))
        gpu = GpuFacts(total, free, cc)
        if asked != "auto" and supported(BY_NAME[asked], "cuda", cc):
            with pytest.raises(ConfigError):
                verdict(None, Sizing(asked, streams), gpu)
            continue
        v = verdict(None, Sizing(asked, streams), gpu)
        where = (card, share, streams, asked, cc, v.kind, v.line)
        names = [asked] if asked != "auto" else [n for n in ORDER
                                                 if not supported(BY_NAME[n], "cuda", cc)]
        counts = [streams] if asked != "auto" else list(range(streams, 0, -1))
        fitting = [(n, p) for n in counts for p in names if _needs(p, n, cc) <= usable]
        if fitting:  # fits: the first in the order tried (streams asked first, most precise first)
            n, p = fitting[0]
            assert v.fits and v.choice.precision.name == p and v.choice.streams == n, where
            assert v.kind == ("fits" if n == streams else "fewer_streams"), where
            assert v.choice.free_needed_bytes == _needs(p, n, cc) and not v.fix, where
        else:  # does not fit: the least that would start, its numbers and a fix
            least = _needs(names[-1], counts[-1], cc)
            assert not v.fits and v.fix, where
            assert v.choice.free_needed_bytes == least, where
            assert v.kind == ("too_small" if least > int(total * 0.95) else "not_free"), where
            assert f"≈{memory.gib(least)} free to start" in v.line, where
            if v.kind == "not_free":  # the free memory the decision counted, not more
                assert f"has {memory.gib(usable)} free now" in v.line, where
            else:
                assert f"at most {memory.gib(int(total * 0.95))} of it can be" in v.line, where
        seen.add(v.kind)
    if card == 24:
        assert seen >= {"fits", "not_free"}, seen
    if card == 4:
        assert "too_small" in seen, seen


PLACES = r"""
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.commands import build_parser
from voxcap.commands.doctor import run_checks
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.model.folder import inspect_model_dir
from voxcap.engine.settings import InProcessSettings
from voxcap.engine.sizing.memory import Sizing
from voxcap.engine.sizing.verdict import read_gpu_facts, verdict
from voxcap.errors import VoxcapError
from voxcap.gui.first_run import FirstRunDialog
from voxcap.app.model_check import kv_note
from voxcap.gui.settings.setting_words import for_the_app

model, cases = sys.argv[1], json.loads(sys.argv[2])
app = QApplication([])
results = {}
for key, (precision, total, free, cc) in cases.items():
    # the fake driver reads these at each call: each case is another card
    os.environ.update(FAKE_NVML_TOTAL=str(total), FAKE_NVML_FREE=str(free), FAKE_NVML_CC=cc)
    facts = read_gpu_facts()
    out = results[key] = {"card": [facts.total_bytes, facts.free_bytes]}
    for name, info in (("tiny", inspect_model_dir(model, True)), ("real", None)):
        v = verdict(info, Sizing(precision, 2), facts)
        out[name] = {"kind": v.kind, "line": v.line, "fix": v.fix}
    e = LocalEngine(InProcessSettings(model, dummy_weights=True, precision=precision))
    try:
        e.engine_args("cuda")
        out["gate"] = {"line": e.precision_choice.line}
    except VoxcapError as exc:
        out["gate"] = {"error": exc.message, "fix": exc.fix}
    args = build_parser()[0].parse_args(["doctor", "--json", "--model", model, "--dummy-weights",
                                         "--precision", precision])
    doc = {c.id: c for c in run_checks(args)}["gpu_memory"]
    out["doctor"] = {"verdict": doc.verdict, "summary": doc.summary, "fix": doc.fix}
    out["settings"] = for_the_app(kv_note(model, True, Sizing(precision, 2))[1])  # as Settings shows it
    out["first_run"] = FirstRunDialog(settings=AppSettings(engine=EngineChoice(
                                                                               precision=precision))).gpu_label.text()
print(json.dumps(results))
"""

CARDS_SHOWN = [
    (16, 4.0, "8.9"),  # a 16 GB card with a game open: the first-run dialog used to say 13.5 GiB
    (12, 11.5, "8.6"),
    (8, 6.3, "8.9"),  # an 8 GB card during a video call
    (4, 3.8, "8.6"),  # too small for any choice of the real model
    # the tiny model (1.7 GiB with the measured CUDA context) not fitting: not now, and never
    (12, 1.5, "8.6"),
    (1, 0.9, "8.6"),
]
PRECISIONS = ("auto", "bfloat16")


def _case(precision, total_gib, free_gib, cc) -> str:
    return f"{precision}-{total_gib}-{free_gib}-{cc}"


@pytest.fixture(scope="module")
def places(fake_gpu, tiny_model_dir, tmp_path_factory):
    """What the four places say for every card and precision below, read in one process (its
    start, Qt's and vLLM's imports, is most of the time; the fake driver reads its figures at
    each call, so each case is another card)."""
    tmp = tmp_path_factory.mktemp("places")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML")}
    env.update(LD_LIBRARY_PATH=str(fake_gpu), FAKE_NVML_RESERVED="0", VOXCAP_NVML="ctypes",
               **{f"VOXCAP_{d}_DIR": str(tmp / d.lower()) for d in ("CONFIG", "DATA", "CACHE")})
    cases = {_case(p, t, f, cc): (p, int(t * GIB), int(f * GIB), cc)
             for t, f, cc in CARDS_SHOWN for p in PRECISIONS}
    r = subprocess.run([sys.executable, "-c", PLACES, str(tiny_model_dir), json.dumps(cases)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("total_gib", "free_gib", "cc"), CARDS_SHOWN)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_the_four_places_say_the_same(places, total_gib, free_gib, cc, precision):
    got = places[_case(precision, total_gib, free_gib, cc)]
    assert got["card"] == [int(total_gib * GIB), int(free_gib * GIB)], got  # this case's card
    tiny, real = got["tiny"], got["real"]
    doc, gate = got["doctor"], got["gate"]
    if tiny["kind"] in ("fits", "fewer_streams"):
        assert gate == {"line": tiny["line"]}, got
        assert doc["verdict"] == "ok" and doc["summary"].startswith(tiny["line"] + ": "), got
        assert got["settings"] == tiny["line"], got
    else:
        assert gate["error"] == tiny["line"][0].upper() + tiny["line"][1:] + ".", got
        assert gate["fix"] == tiny["fix"] == doc["fix"], got
        assert doc["verdict"] == "fail" and doc["summary"] == tiny["line"], got
        # the dialogs say the fix in the app's words (a setting, not a flag)
        assert got["settings"] == for_the_app(f"{tiny['line']}. Fix: {tiny['fix']}"), got
    # the first-run dialog, before a model is chosen, speaks of the real model
    first = got["first_run"]
    said = real["line"] + ("" if real["fix"] == "" else f". Fix: {real['fix']}")
    assert first.endswith(": " + for_the_app(said)), got
    assert first.startswith("✓ " if real["kind"] in ("fits", "fewer_streams") else "⚠ "), got
