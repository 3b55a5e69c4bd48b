"""A vLLM general plugin (entry point ``vllm.general_plugins``), run in every vLLM process.

A Ctrl-C typed in a terminal is sent to the whole foreground process group. vLLM's engine-core
process shuts down on SIGINT, so without this the engine would die under the app just when the
app wants it to flush the last words. Each vLLM child process of a voxcap app therefore moves
itself into its own process group; the app (``VOXCAP_APP_PID``) stays where it is and handles
Ctrl-C itself (flush, then exit). vLLM stops its children when the app exits, as before.
"""

from __future__ import annotations

import os

APP_PID_ENV = "VOXCAP_APP_PID"


def detach_from_terminal() -> None:
    app = os.environ.get(APP_PID_ENV)
    if not app or str(os.getpid()) == app:
        return  # not started by voxcap, or the app itself
    try:
        if os.getpgid(0) != os.getpid():
            os.setpgid(0, 0)
    except OSError:  # not permitted here (e.g. a session leader): keep the old behaviour
        pass
