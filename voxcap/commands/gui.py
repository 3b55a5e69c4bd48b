"""``voxcap gui``: the desktop app (Qt is imported only when it runs)."""

from __future__ import annotations

from ..app.settings import AppSettings
from ..settings_schema import add_setting_flags

# the settings `voxcap gui` takes for one run (RunOverrides: never saved)
GUI_SETTINGS = ("model_dir", "dummy_weights", "graph_mode", "precision", "enforce_eager", "source",
                "start_captioning", "start_minimized")


def add_parser(sub) -> list[str]:
    p = sub.add_parser("gui", help="the desktop app: caption overlay, history, meter, settings",
                       description="Start the desktop app (or, if it is running, bring its window "
                                   "forward). Settings are kept in the user's config folder; the "
                                   "options below override them for this run.")
    add_setting_flags(p, AppSettings, GUI_SETTINGS)
    p.add_argument("--toggle-click-through", action="store_true",
                   help="toggle the running app's overlay click-through (bind this to a "
                        "desktop keyboard shortcut) and exit")
    p.add_argument("--toggle-overlay", action="store_true",
                   help="show or hide the running app's captions overlay and exit (for a "
                        "desktop keyboard shortcut where global shortcuts are not available)")
    p.add_argument("--toggle-captioning", action="store_true",
                   help="start or stop the running app's captioning and exit")
    return ["gui"]


def run(args) -> int:
    from ..errors import ConfigError

    try:
        from ..gui.application import run_gui
    except ImportError as exc:
        raise ConfigError(f"The desktop app needs PySide6: {exc}",
                          "pip install 'voxcap[gui]' (on Linux also the libxcb-* and libEGL "
                          "system libraries)") from None
    return run_gui(args)
