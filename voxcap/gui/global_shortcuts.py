"""Global shortcuts: show/hide the overlay and start/stop captioning from any application.

- X11 session: key grabs on the root window (python-xlib, a connection of its own, read from
  Qt's event loop through a QSocketNotifier). A combination another program holds is reported.
- Wayland where the desktop portal offers GlobalShortcuts (KDE Plasma 5.27+, Hyprland, GNOME
  48+): a portal session binds the shortcuts (the desktop may ask the user which keys to use);
  its Activated signals are read on a thread (jeepney, blocking) and handed to the GUI thread
  as a queued Qt signal.
- Elsewhere: not available; ``summary`` and ``fix`` say so, and the commands
  ``voxcap gui --toggle-overlay`` / ``--toggle-captioning`` can be bound by the user instead.

``activated(name)`` carries the shortcut's id: "toggle-overlay" or "toggle-captioning", the
same messages a second ``voxcap gui`` sends (``VoxcapApp.handle_message``).
"""

from __future__ import annotations

import logging
import secrets
import threading

from PySide6.QtCore import QObject, QSocketNotifier, Signal

from ..app.desktop_environment import (
    FALLBACK,
    NO_SHORTCUTS,
    PORTAL,
    PORTAL_GRAB,
    PORTAL_SHORTCUTS,
    SHORTCUTS,
    X11_GRAB,
    OverlayPath,
    shortcut_support,
)

log = logging.getLogger(__name__)

LOCK_MASKS = (0, 2, 16, 18)  # the grab must hold with Caps Lock (2) and Num Lock (16) on too


class GlobalShortcuts(QObject):
    activated = Signal(str)

    def __init__(self, path: OverlayPath, parent=None, portal=None) -> None:
        super().__init__(parent)
        support = shortcut_support(path, **({} if portal is None else {"portal": portal}))
        self.how, self.summary, self.fix = support.how, support.summary, support.fix
        self._x = None
        self.bound = False  # portal: BindShortcuts accepted
        self._thread = None
        self._stop = threading.Event()
        if self.how == X11_GRAB:
            self._start_x11()
        elif self.how == PORTAL_GRAB:
            self._thread = threading.Thread(target=self._portal_main, name="voxcap-shortcuts",
                                            daemon=True)
            self._thread.start()

    @property
    def available(self) -> bool:
        return self.how != NO_SHORTCUTS

    # ---------------------------------------------------------------------------- X11 ----
    def _start_x11(self) -> None:
        try:
            from Xlib import XK, X, error
            from Xlib.display import Display
        except ImportError:
            log.warning("python-xlib is not installed: no global shortcuts", exc_info=True)
            self._unavailable("python-xlib is missing")
            return
        try:
            d = Display()
        except Exception:  # Xlib raises its own errors for a missing display
            log.warning("cannot open the X display for key grabs", exc_info=True)
            self._unavailable("the X display cannot be opened")
            return
        root = d.screen().root
        self._keys: dict[tuple[int, int], str] = {}
        taken = []
        for name, (_what, combo) in SHORTCUTS.items():
            mods, keysym = 0, 0
            for part in combo.split("+"):
                if part == "CTRL":
                    mods |= X.ControlMask
                elif part == "ALT":
                    mods |= X.Mod1Mask
                elif part == "SHIFT":
                    mods |= X.ShiftMask
                elif part in ("SUPER", "LOGO"):
                    mods |= X.Mod4Mask
                else:
                    keysym = XK.string_to_keysym(part.lower())
            code = d.keysym_to_keycode(keysym)
            catch = error.CatchError(error.BadAccess)
            for extra in LOCK_MASKS:
                root.grab_key(code, mods | extra, True, X.GrabModeAsync, X.GrabModeAsync,
                              onerror=catch)
            d.sync()
            if catch.get_error():
                taken.append(combo)
            else:
                self._keys[(code, mods)] = name
        self._x = d
        self._notifier = QSocketNotifier(d.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._x11_events)
        if taken:
            self.summary += f" ({', '.join(taken)} taken by another program)"
        log.info("global shortcuts: %s", self.summary)

    def _x11_events(self) -> None:
        from Xlib import X

        d = self._x
        while d is not None and d.pending_events():
            ev = d.next_event()
            if ev.type != X.KeyPress:
                continue
            mods = ev.state & ~(2 | 16)
            name = self._keys.get((ev.detail, mods))
            if name:
                self.activated.emit(name)

    # ------------------------------------------------------------------------- portal ----
    def _portal_main(self) -> None:
        """On its own thread: a GlobalShortcuts session, then its Activated signals."""
        try:
            from jeepney import DBusAddress, MatchRule, new_method_call
            from jeepney.io.blocking import open_dbus_connection

            conn = open_dbus_connection(bus="SESSION")
        except Exception:
            log.warning("global shortcuts: no session bus", exc_info=True)
            return
        portal = DBusAddress(PORTAL[1], bus_name=PORTAL[0], interface=PORTAL_SHORTCUTS)
        sender = conn.unique_name.lstrip(":").replace(".", "_")

        def request(method: str, signature: str, args: tuple, token: str):
            path = f"/org/freedesktop/portal/desktop/request/{sender}/{token}"
            rule = MatchRule(type="signal", interface="org.freedesktop.portal.Request",
                             member="Response", path=path)
            conn.send_and_get_reply(new_method_call(
                DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "org.freedesktop.DBus"), "AddMatch", "s", (rule.serialise(),)))
            with conn.filter(rule) as queue:
                conn.send_and_get_reply(new_method_call(portal, method, signature, args))
                code, results = conn.recv_until_filtered(queue, timeout=120).body
            return code, results

        try:
            token = "voxcap" + secrets.token_hex(4)
            code, results = request("CreateSession", "a{sv}", (
                {"handle_token": ("s", token), "session_handle_token": ("s", token)},), token)
            if code != 0:
                raise RuntimeError(f"CreateSession answered {code}")
            session = results["session_handle"][1]
            shortcuts = [(name, {"description": ("s", what), "preferred_trigger": ("s", combo)})
                         for name, (what, combo) in SHORTCUTS.items()]
            token2 = "voxcap" + secrets.token_hex(4)
            code, _ = request("BindShortcuts", "oa(sa{sv})sa{sv}", (
                session, shortcuts, "", {"handle_token": ("s", token2)}), token2)
            if code != 0:
                raise RuntimeError(f"BindShortcuts answered {code} (the user declined?)")
            self.bound = True
            log.info("global shortcuts bound through the portal (session %s)", session)
            rule = MatchRule(type="signal", interface=PORTAL_SHORTCUTS, member="Activated")
            conn.send_and_get_reply(new_method_call(
                DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "org.freedesktop.DBus"), "AddMatch", "s", (rule.serialise(),)))
            with conn.filter(rule) as queue:
                while not self._stop.is_set():
                    try:
                        msg = conn.recv_until_filtered(queue, timeout=1.0)
                    except TimeoutError:
                        continue
                    if msg.body and msg.body[0] == session:
                        self.activated.emit(msg.body[1])  # queued to the GUI thread
        except Exception:  # the portal refused or went away: say so in the log
            log.warning("global shortcuts through the portal failed", exc_info=True)
        finally:
            conn.close()

    # ------------------------------------------------------------------------- common ----
    def _unavailable(self, why: str) -> None:
        self.how, self.summary, self.fix = NO_SHORTCUTS, f"not available here: {why}", FALLBACK

    def close(self) -> None:
        self._stop.set()
        if self._x is not None:
            self._notifier.setEnabled(False)
            self._x.close()
            self._x = None
