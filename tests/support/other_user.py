"""A program of another user (``nobody``) on this computer, for the hostile tests: started as
root through setpriv, it says its port (or path) on its first line and what it was sent after.

    with other_user(LISTENER_SOURCE) as spy:
        spy.port                 # its first line, as an int
        ...                      # make voxcap connect there
    spy.output                   # everything it printed after the first line (after the with)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

NOBODY = 65534

needs_root = pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run a program as another user (nobody)")


@dataclass
class Spy:
    proc: subprocess.Popen
    first: str
    output: str = ""

    @property
    def port(self) -> int:
        return int(self.first)


@contextlib.contextmanager
def other_user(source: str, *args: str, timeout: float = 30):
    """Run the Python ``source`` as nobody; its first printed line is ``Spy.first``."""
    cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
           sys.executable, "-c", source, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        spy = Spy(proc, proc.stdout.readline().strip())
        assert spy.first, "the other user's program did not start"
        yield spy
        spy.output = proc.communicate(timeout=timeout)[0]
    finally:
        proc.kill()
        proc.wait()
