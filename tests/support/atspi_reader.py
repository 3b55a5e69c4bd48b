"""Reads an application through AT-SPI, as a screen reader (Orca) does. Runs under the SYSTEM
python3 (Debian's python3-pyatspi and gir1.2-atspi-2.0), not the test venv: the test starts it
as a subprocess on the same private D-Bus session (``tests/support/atspi.py``).

    python3 atspi_reader.py dump APP           # one JSON object: the whole tree of APP_NAME
    python3 atspi_reader.py apps               # JSON: every application on the bus (name, pid,
                                               # how many windows)
    python3 atspi_reader.py listen             # JSON lines: announcements and name
                                               # changes of every app, until stdin closes
    python3 atspi_reader.py do APP ROLE NAME press|text [TEXT]
                                               # what a keyboard/screen-reader user does: the
                                               # first ROLE (or ROLE|ROLE) whose name starts with NAME pressed
                                               # (its first action), or its text set to TEXT
    python3 atspi_reader.py keys COMBO...       # keys typed as a person types them (XTest on
                                               # DISPLAY): "alt+p", "ctrl+shift+o", "F1", "Right";
                                               # "at:X,Y" moves the pointer (focus without a WM)

Each node: role, name, description, text (the Text interface's whole text), value (the Value
interface), labelled_by (the names of the labels that name it), states (showing, focused, ...),
children. APP: its name or process id.
"""

from __future__ import annotations

import json
import sys
import time

import pyatspi  # system python only


def _app(name: str, timeout: float = 20.0):
    """The application called ``name``, or whose process id is ``name``."""
    deadline = time.monotonic() + timeout
    while True:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            if app is not None and name in (app.name, str(app.get_process_id())):
                return app
        if time.monotonic() > deadline:
            names = [a.name for a in _children(desktop)]
            raise SystemExit(f"no application {name!r} on the AT-SPI bus (found {names})")
        time.sleep(0.2)


def _children(acc) -> list:
    """The children there now: a window that closes while it is read leaves a None (seen in CI:
    the welcome dialog closing during a dump), or an object that answers with an error."""
    found = []
    for i in range(acc.childCount):
        try:
            child = acc.getChildAtIndex(i)
        except Exception as exc:  # noqa: BLE001 - gone between childCount and now
            print(f"child {i} gone while read: {exc}", file=sys.stderr)
            continue
        if child is not None:
            found.append(child)
    return found


def _node(acc, depth: int = 0) -> dict:
    out = {"role": acc.getRoleName(), "name": acc.name or "", "description": acc.description or ""}
    try:
        text = acc.queryText()
        out["text"] = text.getText(0, -1)
    except NotImplementedError:
        pass
    try:
        value = acc.queryValue()
        out["value"] = value.currentValue
    except NotImplementedError:
        pass
    labels = []
    for rel in acc.getRelationSet() or ():
        if rel.getRelationType() == pyatspi.RELATION_LABELLED_BY:
            labels += [rel.getTarget(i).name for i in range(rel.getNTargets())]
    if labels:
        out["labelled_by"] = labels
    states = acc.getState()
    out["states"] = [pyatspi.stateToString(s) for s in states.getStates()]
    out["children"] = [] if depth > 40 else [n for n in (_node_if_there(c, depth + 1)
                                                         for c in _children(acc)) if n]
    return out


def _node_if_there(acc, depth: int = 0) -> dict | None:
    """``_node``, or None for an object that went away while it was read."""
    try:
        return _node(acc, depth)
    except Exception as exc:  # noqa: BLE001 - a defunct object answers with GLib/D-Bus errors
        print(f"object gone while read: {exc}", file=sys.stderr)
        return None


def _event(ev) -> None:
    src = ev.source
    try:
        role, name = src.getRoleName(), src.name
    except Exception:  # noqa: BLE001 - the object may be gone already
        role, name = "?", "?"
    detail = ev.any_data if isinstance(ev.any_data, (str, int, float)) else str(ev.any_data)
    print(json.dumps({"type": ev.type, "role": role, "name": name, "data": detail,
                      "detail1": ev.detail1, "at": time.time()}), flush=True)


def _find(acc, role: str, name: str):
    """The ``role`` named ``name`` exactly, else the first whose name starts with it (depth
    first): "Use this" is the button of that name even where "Use this key" comes first."""
    matches = list(_matching(acc, role, name))
    return next((m for m in matches if (m.name or "") == name), matches[0] if matches else None)


def _matching(acc, role: str, name: str, depth: int = 0):
    if acc.getRoleName() in role.split("|") and (acc.name or "").startswith(name):
        yield acc
    for child in _children(acc) if depth < 40 else ():
        yield from _matching(child, role, name, depth + 1)


def _do(app_name: str, role: str, name: str, what: str, text: str = "") -> None:
    target = _find(_app(app_name), role, name)
    if target is None:
        raise SystemExit(f"no {role} named {name!r}")
    if what == "text":
        target.queryEditableText().setTextContents(text)
    else:
        action = target.queryAction()
        names = [action.getName(i) for i in range(action.nActions)]
        action.doAction(next((i for i, n in enumerate(names) if n in ("Press", "Toggle", "click")),
                             0))
    print(json.dumps({"done": what, "role": role, "name": target.name}))


def _keys(*combos: str) -> None:
    """Each combo pressed as a keyboard does, through XTest on $DISPLAY: modifiers down, the
    key, modifiers up ("alt+p", "ctrl+shift+o", "F1", "Right"). "at:X,Y" puts the pointer there
    first: with no window manager (Xvfb) the keyboard goes to the window under the pointer."""
    import ctypes
    import os

    x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XStringToKeysym.restype = ctypes.c_ulong
    x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_int, ctypes.c_ulong]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XQueryPointer.argtypes = [ctypes.c_void_p, ctypes.c_ulong, *[ctypes.c_void_p] * 7]
    x11.XSetInputFocus.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_ulong]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XFlush.argtypes = x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x11.XOpenDisplay(os.environ["DISPLAY"].encode())
    names = {"ctrl": "Control_L", "alt": "Alt_L", "shift": "Shift_L"}

    def code(name: str) -> int:
        return x11.XKeysymToKeycode(display, x11.XStringToKeysym(names.get(name, name).encode()))
    for combo in combos:
        if combo.startswith("at:"):
            xtst.XTestFakeMotionEvent(display, -1, *map(int, combo[3:].split(",")), 0)
            x11.XSync(display, False)
            root, child, other = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_int()
            x11.XQueryPointer(display, x11.XDefaultRootWindow(display), ctypes.byref(root),
                              ctypes.byref(child), *[ctypes.byref(other)] * 4,
                              ctypes.byref(ctypes.c_uint()))
            x11.XSetInputFocus(display, child, 2, 0)  # RevertToParent, CurrentTime
            continue
        codes = [code(k) for k in combo.split("+")]
        for c in codes:  # a hand's pace: Qt's menu bar tells Alt+H from Alt alone by order
            xtst.XTestFakeKeyEvent(display, c, True, 0)
            x11.XFlush(display)
            pressed = time.time()
            time.sleep(0.05)
        print(json.dumps({"pressed": combo, "at": pressed}), flush=True)  # the combo's last key
        for c in reversed(codes):
            xtst.XTestFakeKeyEvent(display, c, False, 0)
            x11.XFlush(display)
            time.sleep(0.05)
        time.sleep(0.2)
    x11.XCloseDisplay(display)


def main() -> None:
    mode = sys.argv[1]
    if mode == "keys":
        _keys(*sys.argv[2:])
        return
    if mode == "do":
        _do(*sys.argv[2:])
        return
    if mode == "apps":
        desktop = pyatspi.Registry.getDesktop(0)
        print(json.dumps([{"name": a.name or "", "pid": a.get_process_id(), "windows": a.childCount}
                          for a in _children(desktop)]))
        return
    if mode == "dump":
        app = _app(sys.argv[2])
        children = [n for n in map(_node_if_there, _children(app)) if n]
        print(json.dumps({"name": app.name, "children": children}))
        return
    from gi.repository import GLib

    for kind in ("object:announcement", "object:property-change:accessible-name",
                 "object:text-changed", "object:state-changed:showing"):
        pyatspi.Registry.registerEventListener(_event, kind)
    print(json.dumps({"type": "listening"}), flush=True)
    GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT,
                      GLib.IO_IN | GLib.IO_HUP, lambda *_: pyatspi.Registry.stop() or False)
    pyatspi.Registry.start()


if __name__ == "__main__":
    main()
