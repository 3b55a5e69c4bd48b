"""Settings on a real screen (Xvfb) at the desktop's font and at 1.6x, walked by Tab as a
keyboard user does (``support/settings_fit_app.py``): on every tab each control is reached and
shown whole once it has the focus, nothing is squeezed below what its text needs, no page scrolls
sideways, and the dialog with OK and Cancel stays on the screen; the same for the first-use offer
of a translation model; the Translation tab and the offer also while a model downloads.

Before, only the first tab scrolled: at 1.6x on 1024x768 the Share captions tab (sharing on the
network, its QR code shown) pushed OK and Cancel off the screen; at 1.6x on 1400x900 the first
page scrolled sideways (the session length's note and the memory estimate did not wrap); the
offer squeezed its row of buttons at 1.6x."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.xvfb import Xvfb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Xvfb") is None, reason="no Xvfb: run scripts/setup-dev.sh"),
]
APP = Path(__file__).resolve().parents[1] / "support" / "settings_fit_app.py"
SHOTS = os.environ.get("VOXCAP_SHOTS", "")


@pytest.mark.parametrize(("width", "height", "scale"),
                         [(1024, 768, 1.0), (1024, 768, 1.6), (1400, 900, 1.6)],
                         ids=["1024x768", "1024x768-large-font", "1400x900-large-font"])
def test_every_tab_fits_the_screen_and_is_walked_by_keyboard(width, height, scale):
    with Xvfb(width, height) as x:
        x.start_compositor()
        out = subprocess.run([sys.executable, str(APP), str(scale), SHOTS], capture_output=True,
                             text=True, timeout=240)
    line = next((s for s in out.stdout.splitlines() if s.startswith("REPORT ")), None)
    assert line is not None, out.stdout[-2000:] + out.stderr[-4000:]
    report = json.loads(line.removeprefix("REPORT "))
    settings = report["settings"]
    sx, sy, sw, sh = settings["screen"]
    assert len(settings["tabs"]) == 5, settings["tabs"].keys()  # the Translation tab twice
    for title, tab in settings["tabs"].items():
        print(title, "stops reached:", len(tab["reached"]), "frame:", tab["frame"])
        fx, fy, fw, fh = tab["frame"]
        assert sx <= fx and fx + fw <= sx + sw and sy <= fy and fy + fh <= sy + sh, (title, tab)
        assert [shown for _text, _rect, shown in tab["buttons"]] == [True, True], (title, tab)
        assert tab["reached"] and tab["missed"] == [], (title, tab["missed"])
        assert tab["hidden"] == [], (title, tab["hidden"])  # scrolled to once focused
        assert tab["squeezed"] == [], (title, tab["squeezed"])
        assert not tab["sideways"], title
    assert len(settings["tabs"]["Share captions"]["reached"]) == 12  # all its fields on
    assert "QPushButton Do&wnload" in settings["tabs"]["Translation"]["reached"]
    assert "QPushButton Ca&ncel download" in settings["tabs"]["Translation, downloading"]["reached"]
    offer = report["offer"]
    for state in (offer, offer["downloading"]):
        assert state["missed"] == [] and state["hidden"] == [], state
        assert state["squeezed"] == [], state  # its row of buttons whole
    assert offer["reached"] == ["QComboBox Language spoken", "QPushButton &Download",
                                "QPushButton Install from a &file…", "QPushButton &Not now"]
    assert sorted(offer["downloading"]["reached"]) == ["QPushButton &Cancel download",
                                                       "QPushButton &Not now"]
