"""The Python version vLLM 0.32.0 supports."""

from __future__ import annotations

import platform
import sys

from ...engine.vllm_adapter.pin import PINNED_VLLM
from .base import (
    FAIL,
    MAX_PYTHON,
    MIN_PYTHON,
    OK,
    Check,
    Context,
)


def check_python(ctx: Context, args) -> Check:
    v = sys.version_info
    details = {"version": platform.python_version(), "executable": sys.executable,
               "platform": platform.platform(), "machine": platform.machine()}
    summary = f"Python {platform.python_version()} ({sys.executable})"
    if v[:2] < MIN_PYTHON or v[:2] > MAX_PYTHON:
        return Check("python", "Python", FAIL,
                     summary + f": voxcap and vLLM {PINNED_VLLM} need Python "
                     f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]} to {MAX_PYTHON[0]}.{MAX_PYTHON[1]}",
                     "install voxcap with a supported Python (the installer picks one: "
                     "installer/install.sh --python python3.12)", details)
    return Check("python", "Python", OK, summary, "", details)
