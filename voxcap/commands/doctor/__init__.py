"""``voxcap doctor [--json] [--selftest]``: is everything in place for captions, and if not, what
to do about it.

Each check gives a verdict, ``ok``, ``warn`` (works, but worth knowing), ``fail`` (blocks
captioning) or ``skip`` (does not apply: the GPU checks with a remote engine), one line saying
what was found, and the fix. The exit code is 1 when any check fails, else 0.

Only the standard library is imported up front: the checks import numpy, torch, vLLM, pulsectl,
PySide6... lazily and report a missing one as a finding, so doctor runs in a broken or bare
environment (``python3 -m voxcap.cli doctor`` from a checkout, with nothing installed).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace

from ... import __version__
from ...app.settings import AppSettings
from ...settings_schema import add_setting_flags
from ..flag_words import in_flags
from .base import FAIL, Check, Context
from .desktop import check_desktop
from .folders import check_dirs
from .gpu import check_gpu
from .gpu_memory import check_gpu_memory
from .model import check_model
from .overlay import check_overlay
from .packages import check_packages
from .python import check_python
from .report import render, result_line
from .selftest import check_selftest
from .server import check_server
from .settings import check_settings
from .sound import check_sound
from .vllm_install import check_vllm

# The registry: every check, in the order they run and are shown (one module each, beside this
# one). The GPU memory check needs the model's shape, so the model check runs before it.
CHECKS = (check_settings, check_python, check_packages, check_vllm, check_gpu, check_model,
          check_gpu_memory, check_server, check_sound, check_desktop, check_overlay, check_dirs)



def run_checks(args) -> list[Check]:
    ctx = Context()
    checks = []
    for fn in CHECKS + ((check_selftest,) if args.selftest else ()):
        try:
            checks.append(fn(ctx, args))
        except Exception as exc:  # noqa: BLE001 - a check's own bug must not hide the others
            name = fn.__name__.removeprefix("check_")
            checks.append(Check(name, name, FAIL, f"the check itself failed: "
                                f"{type(exc).__name__}: {exc}",
                                "report this as a bug in voxcap (with `voxcap doctor --json`)"))
    return checks


def add_parser(sub) -> list[str]:
    p = sub.add_parser("doctor", help="check that everything captions need is in place",
                       description="Check Python, packages, vLLM, the NVIDIA GPU and its memory, "
                                   "the model, the sound server and devices, the desktop app's "
                                   "libraries and voxcap's folders; each with a verdict (ok, "
                                   "warn, fail, skip) and a fix. Exit code 1 when something "
                                   "blocks captioning.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--selftest", action="store_true",
                   help="also run the tiny model through the engine (about a minute; a GPU or "
                        "vLLM's CPU build)")
    p.add_argument("--selftest-timeout", type=float, default=900, metavar="S",
                   help=argparse.SUPPRESS)
    checked = "; checked instead of the app's setting"
    add_setting_flags(p, AppSettings, ["model_dir", "dummy_weights", "server_url", "precision"],
                      more_help=dict.fromkeys(("model_dir", "server_url", "precision"), checked))
    return ["doctor"]


def run(args) -> int:
    checks = [replace(c, summary=in_flags(c.summary), fix=in_flags(c.fix)) for c in run_checks(args)]
    failed = [c.id for c in checks if c.verdict == FAIL]
    if args.json:
        sys.stdout.write(in_flags(json.dumps(  # also the details' texts
            {"voxcap": __version__, "ok": not failed, "blocking": failed,
             "result": result_line(checks), "checks": [asdict(c) for c in checks]},
            indent=2, default=str)))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(checks))
    sys.stdout.flush()
    return 1 if failed else 0
