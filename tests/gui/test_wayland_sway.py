"""The overlay on a real wlroots compositor: sway started headless (two virtual outputs), the real
app in its own process on Qt's Wayland platform (scripted engine and audio: what is under test
is the windowing). Proven from the compositor's side: sway's own log names the surface's layer,
grim's screenshot shows the captions over a fullscreen window that has the focus, swaymsg
removes and re-adds an output.

``VOXCAP_SHOTS=docs/screenshots`` keeps the screenshots there.
"""

from __future__ import annotations

import re
import time

import pytest
from PySide6.QtGui import QImage
from support.compositors import Sway, missing
from support.overlay_client import AppProcess, keep, pixel
from support.virtual_pointer import BTN_RIGHT, VirtualPointer

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(missing("sway", "swaymsg", "grim")),
                                 reason="sway/grim not installed (scripts/setup-dev.sh)")]


def nodes(tree: dict):
    """The windows of swaymsg's tree (leaf nodes with a pid)."""
    for n in tree.get("nodes", []) + tree.get("floating_nodes", []):
        if n.get("pid"):
            yield {k: n.get(k) for k in ("name", "pid", "focused", "fullscreen_mode", "type")}
        yield from nodes(n)


def mapped(st: dict, output: str) -> bool:
    lay = st.get("layer") or {}
    return bool(lay.get("mapped") and lay.get("configured") and lay.get("output") == output
                and lay.get("frames", 0) > 0)


@pytest.fixture
def sway():
    with Sway(outputs=2, nested=True) as s:
        yield s


def test_overlay_on_the_overlay_layer_above_fullscreen_outputs_and_restart(sway, tmp_path):
    config = tmp_path / "config"
    app = AppProcess(sway.env, config)
    try:
        st = app.started
        assert st["path"] == "layer-shell" and st["platform"] == "wayland", st
        st = app.wait_for(lambda s: mapped(s, "WL-1"))
        assert mapped(st, "WL-1"), st
        # sway's own word: a surface of ours on layer 3 (overlay), above fullscreen windows
        log = sway.log_text()
        assert re.search(r"new layer surface: namespace voxcap-captions layer 3", log), log[-3000:]

        app.ask("caption")
        st = app.wait_for(lambda s: "scripted" in " ".join(s["text"]))
        assert "scripted" in " ".join(st["text"]), st
        app.ask("fullscreen")
        time.sleep(1.0)
        windows = list(nodes(sway.msg("-t", "get_tree")))
        assert any(n.get("fullscreen_mode") == 1 and n.get("focused") for n in windows), \
            f"the other window is not fullscreen with the focus: {windows}"
        shot = sway.screenshot(tmp_path / "sway.png", "WL-1")
        keep(shot, "wayland-sway-overlay-over-fullscreen.png")
        img = QImage(str(shot))
        x, y, w, h = st["geometry"]
        assert pixel(img, 5, 5)[1] > 100, "the fullscreen window (green) is not on screen"
        inside = pixel(img, x + w - 20, y + h // 2)  # the overlay's dark band over the green
        assert inside[1] < 80, f"no overlay at its place over the fullscreen window: {inside}"
        whites = sum(1 for px in range(x, x + w, 3) for py in range(y, y + h, 3)
                     if min(pixel(img, px, py)) > 200)
        assert whites > 50, "no caption text on the overlay"

        # onto the second output; it is unplugged, then a monitor is plugged in again
        app.ask(f"move {1280 + 200} 400")
        st = app.wait_for(lambda s: mapped(s, "WL-2"))
        assert mapped(st, "WL-2") and st["saved_screen"] == "WL-2", st
        sway.remove_output("WL-2")
        sway.wait_outputs(1)
        st = app.wait_for(lambda s: mapped(s, "WL-1"))
        assert mapped(st, "WL-1"), f"not shown on the remaining output: {st}"
        time.sleep(0.5)
        shot = sway.screenshot(tmp_path / "stand-in.png", "WL-1")
        img = QImage(str(shot))
        assert any(pixel(img, px, 400 + 20)[1] < 80 for px in range(0, img.width(), 10)), \
            "the overlay is not inside the remaining output"
        assert st["saved"][:2] == [1480, 400] and st["saved_screen"] == "WL-2", \
            f"an unplugged monitor changed the saved place: {st}"
        sway.add_output()
        sway.wait_outputs(2)
        st = app.wait_for(lambda s: mapped(s, "WL-3"))
        assert mapped(st, "WL-3"), f"did not go back to its place on the new output: {st}"
        shot = sway.screenshot(tmp_path / "replugged.png", "WL-3")
        assert pixel(QImage(str(shot)), 200 + w - 20, 400 + 20)[1] < 80
    finally:
        app.quit()

    again = AppProcess(sway.env, config)
    try:
        st = again.wait_for(lambda s: mapped(s, "WL-3"))
        assert mapped(st, "WL-3") and st["geometry"][:2] == [1480, 400], st
        time.sleep(0.5)
        shot = sway.screenshot(tmp_path / "restart.png", "WL-3")
        img = QImage(str(shot))
        inside, outside = pixel(img, 200 + 20, 400 + 20), pixel(img, 190, 390)
        assert sum(inside) < sum(outside) - 60, \
            f"the overlay is not at its saved place after a restart: {inside} vs {outside}"
    finally:
        again.quit()


def test_hidpi_output_gets_buffers_at_its_scale(tmp_path):
    """A 200 % output (2560x1440 pixels, 1280x720 logical): the overlay's buffers have twice the
    pixels, so its text is as sharp as the compositor's own; its place is in logical pixels."""
    with Sway(width=2560, height=1440) as sway:
        sway.msg("output HEADLESS-1 scale 2")
        app = AppProcess(sway.env, tmp_path / "config")
        try:
            app.ask("caption")
            st = app.wait_for(lambda s: mapped(s, "HEADLESS-1") and "scripted" in " ".join(s["text"])
                              and s["layer"]["scale"] == 2)
            assert st["layer"]["scale"] == 2 and mapped(st, "HEADLESS-1"), st
            time.sleep(0.5)
            shot = sway.screenshot(tmp_path / "hidpi.png")
            img = QImage(str(shot))
            assert (img.width(), img.height()) == (2560, 1440)
            x, y, w, h = st["geometry"]
            assert x + w <= 1280 and y + h <= 720, st  # logical
            inside = pixel(img, 2 * (x + w) - 30, 2 * y + h)
            assert sum(inside) < 400, f"no overlay at twice its logical place: {inside}"
            whites = sum(1 for px in range(2 * x, 2 * (x + w), 4) for py in range(2 * y, 2 * (y + h), 4)
                         if min(pixel(img, px, py)) > 200)
            assert whites > 100, "no caption text on the overlay"
            keep(shot, "wayland-sway-overlay-scale-2.png")
        finally:
            app.quit()


def test_drag_right_click_and_click_through_with_a_pointer(tmp_path):
    """A pointer the compositor knows as a mouse: a left drag moves the overlay (and saves the
    place), with click-through on a click lands on the window below instead."""
    with Sway() as sway:
        app = AppProcess(sway.env, tmp_path / "config")
        pointer = None
        try:
            app.ask("fullscreen")
            st = app.wait_for(lambda s: mapped(s, "HEADLESS-1"))
            x, y, w, h = st["geometry"]
            display = f"{sway.env['XDG_RUNTIME_DIR']}/{sway.env['WAYLAND_DISPLAY']}"
            pointer = VirtualPointer(display, 1280, 720)
            time.sleep(0.5)
            pointer.drag((x + w // 2, y + h // 2), (x + w // 2 - 150, y + h // 2 - 200))
            st = app.wait_for(lambda s: s["geometry"][:2] == [x - 150, y - 200])
            assert st["geometry"][:2] == [x - 150, y - 200], st
            assert st["saved"][:2] == [x - 150, y - 200], f"the new place was not saved: {st}"
            assert st["other_clicks"] == 0, "the click went through the overlay"
            shot = sway.screenshot(tmp_path / "dragged.png")
            assert sum(pixel(QImage(str(shot)), x - 150 + w - 20, y - 200 + 20)) < 200

            pointer.click(x - 150 + w // 2, y - 200 + h // 2, BTN_RIGHT)  # the voxcap window
            app.ask("click-through")
            app.wait_for(lambda s: s["click_through"])
            time.sleep(0.3)
            pointer.click(x - 150 + w // 2, y - 200 + h // 2)
            st = app.wait_for(lambda s: s["other_clicks"] > 0, 5)
            assert st["other_clicks"] == 1, f"click-through: the window below got no click: {st}"
            assert st["geometry"][:2] == [x - 150, y - 200] and mapped(st, "HEADLESS-1"), st
        finally:
            if pointer is not None:
                pointer.close()
            app.quit()
