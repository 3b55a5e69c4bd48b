"""voxcap's own packages: core, audio and GUI."""

from __future__ import annotations

from ... import __version__
from .base import (
    AUDIO_PACKAGES,
    CORE_PACKAGES,
    ENGINE_PACKAGES,
    FAIL,
    GUI_PACKAGES,
    OK,
    REINSTALL,
    WARN,
    Check,
    Context,
    _try_import,
    _version,
)


def check_packages(ctx: Context, args) -> Check:
    found: dict[str, str | None] = {"voxcap": __version__}
    broken: list[str] = []
    missing_core: list[str] = []
    missing_audio: list[str] = []
    missing_gui: list[str] = []
    for group, missing in ((CORE_PACKAGES, missing_core), (AUDIO_PACKAGES, missing_audio),
                           (GUI_PACKAGES, missing_gui)):
        for dist, module in group.items():
            found[dist] = _version(dist)
            if found[dist] is None:
                missing.append(dist)
            elif (why := _try_import(module)) is not None:
                broken.append(f"{dist} ({why})")
    for dist in ENGINE_PACKAGES:
        found[dist] = _version(dist)
    details = {"versions": found, "missing": missing_core + missing_audio + missing_gui,
               "broken": broken}
    listed = ", ".join(f"{k} {v}" for k, v in found.items() if v)
    if missing_core or missing_audio:
        return Check("packages", "Python packages", FAIL,
                     f"missing: {', '.join(missing_core + missing_audio)} (installed: {listed})",
                     REINSTALL, details)
    if broken:
        return Check("packages", "Python packages", FAIL, f"cannot be loaded: {'; '.join(broken)}",
                     "install the system library named above (see the sound and desktop-app "
                     f"checks), or {REINSTALL}", details)
    if missing_gui:
        return Check("packages", "Python packages", WARN,
                     f"the desktop app's Qt (PySide6-Essentials) is not installed; the command "
                     f"line works ({listed})", REINSTALL, details)
    return Check("packages", "Python packages", OK, listed, "", details)
