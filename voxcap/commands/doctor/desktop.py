"""The desktop app's libraries (Qt and its platform plugins)."""

from __future__ import annotations

import os
import shutil
import subprocess

from .base import (
    FAIL,
    OK,
    REINSTALL,
    WARN,
    Check,
    Context,
    _distro_install,
    _version,
    log,
)

_XCB_LIBS = {  # library -> Debian/Ubuntu package (what Qt's xcb platform plugin loads)
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-icccm.so.4": "libxcb-icccm4", "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0", "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xkb.so.1": "libxcb-xkb1",
    "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3", "libxcb-randr.so.0": "libxcb-randr0",
}


def check_desktop(ctx: Context, args) -> Check:
    """Whether Qt's platform plugin finds its system libraries (ldd of the xcb plugin)."""
    title = "Desktop app (Qt)"
    version = _version("PySide6-Essentials")
    if version is None:
        return Check("desktop", title, WARN, "PySide6-Essentials is not installed: only the "
                     "command line works", REINSTALL)
    try:
        from ...gui.qt_probe import xcb_plugin
    except Exception as exc:  # noqa: BLE001 - the verdict says it
        log.warning("PySide6 cannot be loaded", exc_info=True)
        return Check("desktop", title, FAIL, f"PySide6 cannot be loaded: {exc}", REINSTALL)
    plugin = xcb_plugin()
    details: dict[str, object] = {"pyside6": version, "plugin": str(plugin),
               "display": os.environ.get("DISPLAY", ""),
               "wayland_display": os.environ.get("WAYLAND_DISPLAY", "")}
    if not plugin.is_file() or shutil.which("ldd") is None:
        return Check("desktop", title, OK, f"PySide6 {version}", "", details)
    try:
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    missing = sorted({line.split()[0] for line in out.splitlines() if "not found" in line})
    details["missing_libraries"] = missing
    if missing:
        packages = sorted({_XCB_LIBS.get(lib, lib) for lib in missing})
        return Check("desktop", title, FAIL, f"the desktop app cannot open a window: missing "
                     f"system libraries {', '.join(missing)}", _distro_install(packages), details)
    return Check("desktop", title, OK, f"PySide6 {version}; Qt's X11/XWayland plugin finds its "
                 "libraries", "", details)
