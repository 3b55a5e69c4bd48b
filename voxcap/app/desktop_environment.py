"""Which desktop the app runs on, and so how the caption overlay stays above other windows.

"Session" here is the desktop (login) session the environment variables describe; a saved
captioning session is ``captions.sessions``, an engine session one stretch of a stream inside
the engine (``engine.rollover``).

Wayland gives an ordinary window no way to keep itself on top, so the overlay takes one of
these paths, picked at start from the session (``XDG_SESSION_TYPE``, ``WAYLAND_DISPLAY``,
``DISPLAY``, ``XDG_CURRENT_DESKTOP``) and, on Wayland, from the globals the compositor offers:

- ``x11``: an X11 session; the window manager honours "stay on top" (_NET_WM_STATE_ABOVE).
- ``layer-shell``: a Wayland compositor with wlr-layer-shell (sway, Hyprland, river, labwc,
  KDE Plasma...): the overlay is a surface on the compositor's overlay layer, above normal and
  fullscreen windows.
- ``xwayland``: GNOME on Wayland (mutter has no layer-shell): the whole app runs as an X11 client
  of XWayland, where mutter honours "above" for X11 windows.
- ``window``: none of these: the overlay is a normal window that other windows can cover; one
  message says what the user can do.

Qt-free: ``voxcap doctor`` uses it as well as the GUI. The Wayland probe connects with pywayland
(a client of its own; it does not touch Qt).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

X11, LAYER_SHELL, XWAYLAND, WINDOW, OFFSCREEN = "x11", "layer-shell", "xwayland", "window", "offscreen"
LAYER_SHELL_GLOBAL = "zwlr_layer_shell_v1"


@dataclass
class OverlayPath:
    path: str  # one of X11, LAYER_SHELL, XWAYLAND, WINDOW, OFFSCREEN
    reason: str  # why this path (one line, for doctor and the log)
    qt_platform: str = ""  # the Qt platform the app must start with ("" = Qt's own choice)
    advice: str = ""  # WINDOW only: what the user can do on this desktop
    desktop: str = ""
    globals: list[str] = field(default_factory=list)  # Wayland globals seen (probe)

    @property
    def on_top(self) -> bool:
        return self.path in (X11, LAYER_SHELL, XWAYLAND)


def wayland_globals(display: str | None = None) -> list[str] | None:
    """The interface names the Wayland compositor offers, or None when it cannot be asked
    (no pywayland, no compositor at ``display``)."""
    try:
        from pywayland.client import Display
    except ImportError:
        log.warning("pywayland is not installed: cannot ask the compositor for layer-shell",
                    exc_info=True)
        return None
    names: list[str] = []
    try:
        d = Display(display)
        d.connect()
    except Exception:  # pywayland raises ValueError/RuntimeError on no compositor
        log.warning("cannot connect to the Wayland compositor %r", display, exc_info=True)
        return None
    try:
        registry = d.get_registry()
        registry.dispatcher["global"] = lambda _r, _name, iface, _ver: names.append(iface)
        d.roundtrip()
    finally:
        d.disconnect()
    return names


def detect(env: Mapping[str, str] | None = None, probe=wayland_globals) -> OverlayPath:
    """The overlay's path for the session in ``env`` (default: this process's environment).
    ``probe(display) -> list of globals | None`` asks the Wayland compositor."""
    env = os.environ if env is None else env
    desktop = env.get("XDG_CURRENT_DESKTOP", "")
    desktops = {d.strip().lower() for d in desktop.split(":") if d.strip()}
    session = env.get("XDG_SESSION_TYPE", "").lower()
    wayland = env.get("WAYLAND_DISPLAY", "")
    x_display = env.get("DISPLAY", "")
    forced = env.get("QT_QPA_PLATFORM", "").split(":")[0].lower()
    where = f"desktop {desktop or 'unknown'}, session {session or 'unknown'}"

    def make(path, reason, qt="", advice="", seen=None):
        return OverlayPath(path, reason, qt, advice, desktop, seen or [])

    if forced in ("offscreen", "minimal", "vnc"):
        return make(OFFSCREEN, f"QT_QPA_PLATFORM={forced}: no screen to keep captions on")
    if forced == "xcb":
        if not x_display:
            return make(WINDOW, "QT_QPA_PLATFORM=xcb but DISPLAY is not set", "xcb",
                        "unset QT_QPA_PLATFORM, or start voxcap from the desktop session")
        return make(X11 if not wayland else XWAYLAND,
                    f"QT_QPA_PLATFORM=xcb: an X11 window ({where}); the window manager keeps it "
                    "on top where it honours _NET_WM_STATE_ABOVE", "xcb")
    if not wayland or session == "x11":
        if x_display:
            return make(X11, f"X11 session on {x_display} ({where}): the window manager keeps the "
                             "overlay on top", "xcb" if session == "x11" and wayland else "")
        return make(WINDOW, "neither WAYLAND_DISPLAY nor DISPLAY is set: no desktop session",
                    "", "start voxcap from a desktop session")
    native = ("QT_QPA_PLATFORM=wayland: Qt runs as a native Wayland client and the compositor has "
              "no layer-shell")
    native_fix = ("start voxcap without QT_QPA_PLATFORM (it runs under XWayland where that keeps "
                  "the overlay on top), or use the desktop's 'Always on Top' for the window "
                  "'voxcap captions'")
    if "gnome" in desktops:  # also ubuntu:GNOME, pop:GNOME
        if forced == "wayland":
            return make(WINDOW, f"{native} ({where})", "wayland", native_fix)
        if x_display:
            return make(XWAYLAND, f"GNOME on Wayland ({where}): mutter has no layer-shell; the app "
                                  f"runs under XWayland ({x_display}), where mutter keeps an "
                                  "X11 window above others", "xcb")
        return make(WINDOW, f"GNOME on Wayland ({where}) without XWayland (DISPLAY is not set): "
                            "no way to keep a window on top", "",
                    "enable XWayland, or click the overlay, press Alt+Space and choose "
                    "'Always on Top'")
    seen = probe(wayland) if probe else None
    if seen is not None and LAYER_SHELL_GLOBAL in seen:
        return make(LAYER_SHELL, f"Wayland compositor offers {LAYER_SHELL_GLOBAL} ({where}): the "
                                 "overlay is a layer surface on the overlay layer", "wayland", "",
                    seen)
    if forced == "wayland":
        return make(WINDOW, f"{native} ({where})", "wayland", native_fix, seen)
    if x_display:
        return make(XWAYLAND, f"Wayland compositor without layer-shell ({where}): the app runs "
                              f"under XWayland ({x_display}); whether the overlay stays on top is "
                              "up to the compositor", "xcb", "", seen)
    why = "could not ask the compositor" if seen is None else "no layer-shell, no XWayland"
    return make(WINDOW, f"Wayland ({where}): {why}; the overlay is a normal window", "",
                "use the compositor's own 'keep above' window rule for the window titled "
                "'voxcap captions', or enable XWayland", seen)


# ------------------------------------------------------------------ global shortcuts ----
PORTAL = ("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop")
PORTAL_SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
# id -> (what it does, the preferred trigger: the portal's notation; X11 grabs the same keys)
SHORTCUTS = {"toggle-overlay": ("Show or hide the captions overlay", "CTRL+ALT+O"),
             "toggle-captioning": ("Start or stop captioning", "CTRL+ALT+C")}
X11_GRAB, PORTAL_GRAB, NO_SHORTCUTS = "x11-grab", "portal", "none"
FALLBACK = ("bind desktop keyboard shortcuts to the commands `voxcap gui --toggle-overlay` and "
            "`voxcap gui --toggle-captioning` (GNOME: Settings → Keyboard → Custom Shortcuts)")


@dataclass
class ShortcutSupport:
    how: str  # X11_GRAB, PORTAL_GRAB or NO_SHORTCUTS
    summary: str
    fix: str = ""


def portal_shortcuts_version() -> int | None:
    """The desktop portal's GlobalShortcuts version on the session bus, None when not offered."""
    try:
        from jeepney import DBusAddress, Properties
        from jeepney.io.blocking import open_dbus_connection
    except ImportError:
        log.warning("jeepney is not installed: cannot ask the desktop portal", exc_info=True)
        return None
    try:
        with open_dbus_connection(bus="SESSION") as conn:
            addr = DBusAddress(PORTAL[1], bus_name=PORTAL[0], interface=PORTAL_SHORTCUTS)
            reply = conn.send_and_get_reply(Properties(addr).get("version"), timeout=3)
    except Exception:  # no session bus, no portal, timeout
        log.info("no desktop portal on the session bus", exc_info=True)
        return None
    if reply.header.message_type.name != "method_return":
        log.info("the desktop portal offers no GlobalShortcuts: %s", reply.body)
        return None
    return int(reply.body[0][1])


def shortcut_support(path: OverlayPath, portal=portal_shortcuts_version) -> ShortcutSupport:
    """How global shortcuts work here. X11 key grabs only in an X11 session: under XWayland
    they would see keys only while an X11 window has the focus."""
    keys = ", ".join(f"{key} {what.lower()}" for what, key in SHORTCUTS.values())
    if path.path == X11:
        return ShortcutSupport(X11_GRAB, f"X11 key grabs: {keys}")
    if path.path == OFFSCREEN:
        return ShortcutSupport(NO_SHORTCUTS, "not available here (no desktop)", FALLBACK)
    version = portal() if portal else None
    if version:
        return ShortcutSupport(PORTAL_GRAB, f"the desktop portal's GlobalShortcuts (version "
                                            f"{version}): the desktop asks once which keys to "
                                            f"use (suggested: {keys})")
    return ShortcutSupport(NO_SHORTCUTS, "not available here: this desktop offers no global "
                                         "shortcuts to apps (no GlobalShortcuts portal)", FALLBACK)
