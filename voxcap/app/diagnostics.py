"""What "Copy diagnostics" (Help menu) puts on the clipboard for a bug report: versions, the
tail of voxcap's log and ``voxcap doctor --json``. No Qt; runs off the GUI thread (doctor
takes seconds). The log holds no caption text (``voxcap.logs``); doctor's output has paths,
versions and hardware facts, no audio and no text."""

from __future__ import annotations

import logging
import platform
import subprocess
import sys
from dataclasses import dataclass

from .. import __version__, logs

log = logging.getLogger(__name__)
DOCTOR_TIMEOUT_S = 120
LOG_LINES = 300


@dataclass(frozen=True)
class DiagnosticsReady:
    """The text is ready (published to the GUI, which copies it)."""

    text: str


def doctor_json(timeout: float = DOCTOR_TIMEOUT_S) -> str:
    """``voxcap doctor --json`` run in its own process (its checks import vLLM and the GPU
    library, which the app must not do in its own)."""
    cmd = [sys.executable, "-m", "voxcap.cli", "doctor", "--json"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("voxcap doctor could not run", exc_info=True)
        return f"(voxcap doctor could not run: {exc})"
    return r.stdout.strip() or f"(voxcap doctor printed nothing; exit {r.returncode}: " \
                               f"{r.stderr.strip()[-500:]})"


def diagnostics_text(doctor: str | None = None, log_lines: int = LOG_LINES) -> str:
    doctor = doctor_json() if doctor is None else doctor
    return (f"voxcap {__version__} diagnostics\n"
            f"python {platform.python_version()} on {platform.platform()}\n\n"
            f"--- voxcap doctor --json\n{doctor}\n\n"
            f"--- the last {log_lines} lines of {logs.log_path()}\n{logs.tail(log_lines)}")
