"""Global shortcuts in an X11 session: the real app grabs Ctrl+Alt+O / Ctrl+Alt+C on the root
window of an Xvfb server; keys typed through XTEST (as a keyboard would) reach it while
another window has the focus. A second program holding the combination is reported."""

from __future__ import annotations

import time

import pytest
from support.overlay_client import AppProcess
from support.xvfb import Xvfb

Xlib = pytest.importorskip("Xlib")
from Xlib import XK, X  # noqa: E402
from Xlib.display import Display  # noqa: E402
from Xlib.ext import xtest  # noqa: E402

pytestmark = pytest.mark.slow


def press(d: Display, *names: str) -> None:
    codes = [d.keysym_to_keycode(XK.string_to_keysym(n)) for n in names]
    for c in codes:
        xtest.fake_input(d, X.KeyPress, c)
    for c in reversed(codes):
        xtest.fake_input(d, X.KeyRelease, c)
    d.sync()


def test_x11_global_shortcuts_toggle_overlay_and_captioning(tmp_path):
    with Xvfb(1280, 720) as x:
        app = AppProcess({"DISPLAY": x.display, "XDG_SESSION_TYPE": "x11"}, tmp_path / "config")
        d = Display(x.display)
        try:
            st = app.started
            assert st["shortcuts"] == "x11-grab" and st["visible"], st
            app.ask("fullscreen")  # another window has the focus
            time.sleep(0.5)
            press(d, "Control_L", "Alt_L", "o")
            st = app.wait_for(lambda s: not s["visible"], 5)
            assert not st["visible"], "Ctrl+Alt+O did not hide the overlay"
            press(d, "Control_L", "Alt_L", "o")
            assert app.wait_for(lambda s: s["visible"], 5)["visible"], "nor show it again"
            press(d, "Control_L", "Alt_L", "c")
            st = app.wait_for(lambda s: s["state"] in ("starting", "waiting", "on"), 10)
            assert st["state"] in ("starting", "waiting", "on"), st
            press(d, "Control_L", "Alt_L", "Caps_Lock")  # Caps Lock on: the grab still holds
            press(d, "Control_L", "Alt_L", "c")
            st = app.wait_for(lambda s: s["state"] in ("stopping", "off"), 10)
            assert st["state"] in ("stopping", "off"), st
        finally:
            app.quit()
            d.close()


def test_x11_shortcut_taken_by_another_program_is_reported(tmp_path):
    with Xvfb(1280, 720) as x:
        d = Display(x.display)
        root = d.screen().root
        code = d.keysym_to_keycode(XK.string_to_keysym("o"))
        root.grab_key(code, X.ControlMask | X.Mod1Mask, True, X.GrabModeAsync, X.GrabModeAsync)
        d.sync()
        app = AppProcess({"DISPLAY": x.display, "XDG_SESSION_TYPE": "x11"}, tmp_path / "config")
        try:
            st = app.started
            assert st["shortcuts"] == "x11-grab", st
            assert "CTRL+ALT+O taken by another program" in st["shortcuts_summary"], st
        finally:
            app.quit()
            d.close()
