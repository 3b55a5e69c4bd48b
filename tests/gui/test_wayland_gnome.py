"""The overlay on GNOME's compositor, mutter, started by the test:

- ``mutter --headless --wayland --virtual-monitor``: a GNOME Wayland session with XWayland. The
  app finds GNOME on Wayland, runs under XWayland, and mutter (its own _NET_WM_STATE and
  stacking list say so) keeps the overlay above a fullscreen window that has the focus; its
  place survives a restart. XWayland's root window has no pixels in this mode, so:
- ``mutter --x11`` on Xvfb: the same window-manager code mutter uses for XWayland clients,
  on a screen ImageMagick can capture: the screenshot.

``VOXCAP_SHOTS=docs/screenshots`` keeps the screenshot there.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from PySide6.QtGui import QImage
from support.compositors import Mutter, missing, unmount_under
from support.overlay_client import AppProcess, keep, pixel
from support.xvfb import Xvfb

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(missing("mutter", "Xwayland", "xprop", "dbus-run-session")),
                                 reason="mutter/XWayland not installed (scripts/setup-dev.sh)")]


def stacking(xprop_out: str) -> list[int]:
    line = next(ln for ln in xprop_out.splitlines() if ln.startswith("_NET_CLIENT_LIST_STACKING"))
    return [int(w.strip(), 16) for w in line.split("#", 1)[1].split(",")]


def active(xprop_out: str) -> int:
    line = next(ln for ln in xprop_out.splitlines() if ln.startswith("_NET_ACTIVE_WINDOW"))
    return int(line.split("#", 1)[1].strip(), 16)


def test_gnome_wayland_overlay_under_xwayland_stays_above_and_keeps_its_place(tmp_path):
    config = tmp_path / "config"
    with Mutter() as gnome:
        app = AppProcess(gnome.env, config)
        try:
            st = app.started
            assert st["path"] == "xwayland" and st["platform"] == "xcb", st
            assert "GNOME" in st["reason"] and st["message"] is None, st
            overlay = st["win_id"]
            state = ""
            deadline = time.monotonic() + 10
            while "_NET_WM_STATE_ABOVE" not in state and time.monotonic() < deadline:
                time.sleep(0.2)
                state = gnome.xprop("-id", str(overlay), "_NET_WM_STATE")
            assert "_NET_WM_STATE_ABOVE" in state, state

            other = app.ask("fullscreen")["win_id"]
            time.sleep(1.5)
            assert "_NET_WM_STATE_FULLSCREEN" in gnome.xprop("-id", str(other), "_NET_WM_STATE")
            root = gnome.xprop("-root", "_NET_ACTIVE_WINDOW", "_NET_CLIENT_LIST_STACKING")
            assert active(root) == other, f"the fullscreen window does not have the focus: {root}"
            order = stacking(root)
            assert order.index(overlay) > order.index(other), \
                f"mutter stacks the overlay below the focused fullscreen window: {root}"

            app.ask("move 300 200")
        finally:
            app.quit()
        again = AppProcess(gnome.env, config)
        try:
            st = again.wait_for(lambda s: s["visible"])
            assert st["geometry"][:2] == [300, 200], st
        finally:
            again.quit()


def test_mutter_screenshot_overlay_over_a_focused_fullscreen_window(tmp_path):
    with Xvfb(1280, 720) as x:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DISPLAY": x.display,
               "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path)}
        wm = subprocess.Popen(["dbus-run-session", "--", "mutter", "--x11", "--replace"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
        app = None
        try:
            deadline = time.monotonic() + 20
            while "_NET_SUPPORTING_WM_CHECK(WINDOW)" not in subprocess.run(
                    ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True,
                    text=True).stdout and time.monotonic() < deadline:
                time.sleep(0.2)
            app = AppProcess({"DISPLAY": x.display, "XDG_SESSION_TYPE": "x11",
                              "XDG_CURRENT_DESKTOP": "GNOME"}, tmp_path / "config")
            assert app.started["path"] == "x11", app.started
            app.ask("caption")
            st = app.wait_for(lambda s: "scripted" in " ".join(s["text"]), 30)
            assert "scripted" in " ".join(st["text"]), f"no captions on the overlay: {st}"
            app.ask("fullscreen")
            gx, gy, w, h = st["geometry"]
            # Captions keep coming, as they do while someone speaks: each new word repaints the
            # overlay. Under load, mutter once kept showing the overlay's frame from before its
            # text for 15 s when nothing repainted it (the text was in the overlay, paints 3).
            for _ in range(15):
                time.sleep(1.0)
                app.ask("feed")
                time.sleep(0.3)
                shot = x.screenshot(tmp_path / "mutter.png")
                img = QImage(str(shot))
                whites = sum(1 for px in range(gx, gx + w, 3) for py in range(gy, gy + h, 3)
                             if min(pixel(img, px, py)) > 200)
                if pixel(img, 5, 5)[1] > 100 and whites > 50:
                    break
            keep(shot, "gnome-mutter-overlay-over-fullscreen.png")
            assert pixel(img, 5, 5)[1] > 100, "the fullscreen window (green) is not on screen"
            assert pixel(img, gx + w - 20, gy + h // 2)[1] < 80, "no overlay over the fullscreen window"
            assert whites > 50, f"no caption text on the overlay: before {st}, now {app.ask('state')}"
        finally:
            if app is not None:
                app.quit()
            os.killpg(wm.pid, 15)  # our own session: dbus-daemon and mutter
            wm.wait(10)
            unmount_under(tmp_path)  # its portal's mount, if one was made
