"""``voxcap devices [--json]``: what can be captured, by the names ``--source`` accepts."""

from __future__ import annotations

import json
import sys

from ..capture.apps import apps_now, format_apps
from ..capture.devices import server_state, uses_sound_server


def add_parser(sub) -> list[str]:
    p = sub.add_parser("devices", help="list the devices audio can be captured from",
                       description="List capture devices by the names `voxcap live --source` "
                                   "accepts: monitors (what an output device plays: 'system "
                                   "audio') and inputs (microphones). '*' marks what --source "
                                   "system and --source mic capture now.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return ["devices"]


def run(args) -> int:
    state = server_state()  # CaptureError (no sound server...) becomes one line + fix
    apps = apps_now()
    if args.json:
        json.dump({"server": state.server, "default_output": state.default_sink,
                   "default_input": state.default_source,
                   "devices": [d.to_dict() for d in state.devices],
                   "apps": [a.to_dict() for a in apps]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    out = sys.stdout
    out.write(f"Sound server: {state.server}\n")
    monitors = [d for d in state.devices if d.is_monitor]
    inputs = [d for d in state.devices if not d.is_monitor]
    width = max((len(d.description) for d in state.devices), default=0)
    if uses_sound_server():
        out.write("\nSystem audio (monitors of output devices):\n")
        for d in monitors:
            out.write(f"  {'*' if d.is_default else ' '} {d.description:<{width}}  [{d.name}]"
                      f"{'  <- --source system' if d.is_default else ''}\n")
        if not monitors:
            out.write("    (none: no output device)\n")
    out.write("\nMicrophones and other inputs:\n")
    for d in inputs:
        out.write(f"  {'*' if d.is_default else ' '} {d.description:<{width}}  [{d.name}]"
                  f"{'  <- --source mic' if d.is_default else ''}\n")
    if not inputs:
        out.write("    (none)\n")
    if uses_sound_server():
        out.write(format_apps(apps))
    out.write('\nCapture one by name: voxcap live --source "NAME" (the description or the name in '
              "brackets).\n")
    return 0
