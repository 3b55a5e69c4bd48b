"""Which path the overlay takes on which desktop (``voxcap.app.desktop_environment``): the rules on
the environments desktops set, the Wayland probe against a real sway, and the bad case, a
Wayland desktop with no way to keep a window on top (mutter without XWayland): a normal
window, one message in the app and in ``voxcap doctor``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.compositors import Mutter, Sway, missing
from support.overlay_client import ROOT, AppProcess

from voxcap.app import desktop_environment as ds

NO_PROBE = None


def _seen(*names):
    return lambda _display: list(names)


@pytest.mark.parametrize("env, probe, path, qt", [
    ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11", "XDG_CURRENT_DESKTOP": "XFCE"}, NO_PROBE, ds.X11, ""),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland",
      "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}, _seen("wl_compositor"), ds.XWAYLAND, "xcb"),
    ({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland",
      "XDG_CURRENT_DESKTOP": "GNOME"}, _seen("wl_compositor"), ds.WINDOW, ""),
    ({"DISPLAY": ":1", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland",
      "XDG_CURRENT_DESKTOP": "KDE"}, _seen("wl_compositor", "zwlr_layer_shell_v1"), ds.LAYER_SHELL,
     "wayland"),
    ({"DISPLAY": ":1", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland",
      "XDG_CURRENT_DESKTOP": "Weston"}, _seen("wl_compositor"), ds.XWAYLAND, "xcb"),
    ({"WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "Weston"}, _seen("wl_compositor"),
     ds.WINDOW, ""),
    ({"WAYLAND_DISPLAY": "wayland-0"}, lambda _d: None, ds.WINDOW, ""),  # compositor unreachable
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "xcb",
      "XDG_CURRENT_DESKTOP": "sway"}, NO_PROBE, ds.XWAYLAND, "xcb"),  # the user's choice stands
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "wayland",
      "XDG_CURRENT_DESKTOP": "GNOME"}, NO_PROBE, ds.WINDOW, "wayland"),  # forced native: says so
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "wayland",
      "XDG_CURRENT_DESKTOP": "sway"}, _seen("zwlr_layer_shell_v1"), ds.LAYER_SHELL, "wayland"),
    ({"QT_QPA_PLATFORM": "offscreen"}, NO_PROBE, ds.OFFSCREEN, ""),
    ({}, NO_PROBE, ds.WINDOW, ""),
])
def test_overlay_path_from_the_session(env, probe, path, qt):
    def never(_display):
        raise AssertionError("the compositor was asked although the environment decides")

    got = ds.detect(env, probe or never)
    assert (got.path, got.qt_platform) == (path, qt), got
    assert got.reason
    assert bool(got.advice) == (path == ds.WINDOW), got


def test_shortcuts_by_session():
    x11 = ds.detect({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"})
    assert ds.shortcut_support(x11, portal=lambda: None).how == ds.X11_GRAB
    gnome = ds.detect({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w", "XDG_CURRENT_DESKTOP": "GNOME"})
    none = ds.shortcut_support(gnome, portal=lambda: None)
    assert none.how == ds.NO_SHORTCUTS and "not available here" in none.summary
    assert "--toggle-overlay" in none.fix
    assert ds.shortcut_support(gnome, portal=lambda: 1).how == ds.PORTAL_GRAB


@pytest.mark.skipif(bool(missing("sway")), reason="sway not installed (scripts/setup-dev.sh)")
def test_probe_finds_layer_shell_on_sway():
    with Sway() as sway:
        display = os.path.join(sway.env["XDG_RUNTIME_DIR"], sway.env["WAYLAND_DISPLAY"])
        seen = ds.wayland_globals(display)
        assert seen and ds.LAYER_SHELL_GLOBAL in seen and "wl_compositor" in seen
        env = {**sway.env, "WAYLAND_DISPLAY": display}
        assert ds.detect(env).path == ds.LAYER_SHELL
    assert ds.wayland_globals(display) is None  # gone: None, not an exception


@pytest.mark.slow
@pytest.mark.skipif(bool(missing("mutter", "dbus-run-session")), reason="mutter not installed")
def test_no_way_on_top_gives_a_normal_window_and_one_message(tmp_path):
    """GNOME on Wayland without XWayland: the overlay still shows (a normal Wayland window),
    the app says once what to do, and doctor says the same."""
    with Mutter(xwayland=False) as gnome:
        assert "DISPLAY" not in gnome.env
        app = AppProcess(gnome.env, tmp_path / "config")
        try:
            st = app.wait_for(lambda s: s["visible"])
            assert st["path"] == ds.WINDOW and st["platform"] == "wayland", st
            assert st["visible"] and st["layer"] is None, st
            text, fix = st["message"]
            assert "normal window" in text and "Always on Top" in fix, st
            assert st["notice"].startswith("The captions overlay is a normal window"), st
        finally:
            app.quit()
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
        env.update(gnome.env, VOXCAP_CONFIG_DIR=str(tmp_path / "config"))
        r = subprocess.run([sys.executable, "-m", "voxcap.cli", "doctor", "--json"], env=env,
                           cwd=ROOT, capture_output=True, text=True, timeout=240)
        checks = {c["id"]: c for c in json.loads(r.stdout)["checks"]}
        overlay = checks["overlay"]
        assert overlay["verdict"] == "warn" and "XWayland" in overlay["fix"], overlay


@pytest.mark.slow
@pytest.mark.skipif(bool(missing("mutter", "dbus-run-session", "Xwayland")),
                    reason="mutter not installed")
def test_forcing_native_wayland_on_gnome_says_the_overlay_is_a_normal_window(tmp_path):
    with Mutter() as gnome:
        app = AppProcess({**gnome.env, "QT_QPA_PLATFORM": "wayland"}, tmp_path / "config")
        try:
            st = app.started
            assert st["platform"] == "wayland" and st["path"] == ds.WINDOW, st
            assert "QT_QPA_PLATFORM" in st["reason"] and st["message"], st
        finally:
            app.quit()
