"""``voxcap gui``: the desktop app (Qt is imported only when it runs)."""

from __future__ import annotations

from ..engine.settings import GRAPH_MODES
from ..engine.sizing.precision import PRECISIONS


def add_parser(sub) -> list[str]:
    p = sub.add_parser("gui", help="the desktop app: caption overlay, history, meter, settings",
                       description="Start the desktop app (or, if it is running, bring its window "
                                   "forward). Settings are kept in the user's config folder; the "
                                   "options below override them for this run.")
    p.add_argument("--model", metavar="DIR", help="Voxtral Realtime model directory")
    p.add_argument("--dummy-weights", action="store_true",
                   help="random weights (self-check with the tiny model; gibberish text)")
    p.add_argument("--graph-mode", choices=GRAPH_MODES, help="CUDA graph mode")
    p.add_argument("--precision", choices=PRECISIONS,
                   help="auto (the most precise that fits the GPU), bfloat16, fp8, fp8_kv, "
                        "mxfp4 (4-bit weights), mxfp4_kv")
    p.add_argument("--eager", action="store_true", help="no compilation, no graphs: faster start")
    p.add_argument("--source", metavar="SOURCE", help="system, mic, both, or a device name")
    p.add_argument("--start", action="store_true", help="start captioning at once")
    p.add_argument("--minimized", action="store_true", help="start minimized")
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
