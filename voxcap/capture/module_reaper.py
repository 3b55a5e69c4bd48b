"""Unload a sound-server module when the voxcap process that loaded it dies, however it dies.

A module loaded into PulseAudio (or pipewire-pulse) stays after the client that loaded it is
gone, so a voxcap killed by SIGKILL, the OOM killer or a power-button logout would leave its echo
canceller in the user's device list. This small process is started next to the module with a
pipe from voxcap as its stdin, in its own session (a Ctrl-C in the terminal is not for it): when
the pipe ends (voxcap closed it after unloading the module itself, or the kernel closed it
because voxcap died) it unloads the module if it is still there under the expected name, and
exits. It lives about 0.1 s longer than voxcap.

    python -m voxcap.capture.module_reaper MODULE_INDEX NAME_IN_ARGUMENTS
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

log = logging.getLogger(__name__)


def start_reaper(module: int, marker: str):
    """Start the reaper for ``module``; returns its Popen (close its stdin to release it)."""
    return subprocess.Popen([sys.executable, "-m", "voxcap.capture.module_reaper", str(module), marker],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ))


def release_reaper(proc) -> None:
    """Tell the reaper voxcap is done (it then finds the module gone and exits)."""
    if proc is None:
        return
    try:
        proc.stdin.close()
        proc.wait(5)
    except (OSError, subprocess.TimeoutExpired):
        log.warning("the module reaper did not exit", exc_info=True)


def main(argv: list[str]) -> int:
    module, marker = int(argv[0]), argv[1]
    sys.stdin.buffer.read()  # until voxcap closes the pipe or dies
    import pulsectl

    with pulsectl.Pulse("voxcap-reaper") as pulse:
        for m in pulse.module_list():
            if m.index == module and marker in (m.argument or ""):
                pulse.module_unload(module)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
