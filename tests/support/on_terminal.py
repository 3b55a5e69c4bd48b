"""A command on a pseudo-terminal, as a person runs it in a terminal window: its output read
as it comes, and the window closed (``hang_up``)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class OnTerminal:
    """A command on a pseudo-terminal (stdout and stderr), read as it writes; ``hang_up()``
    closes the terminal as a closed window does."""

    def __init__(self, argv: list[str], env: dict) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=slave, stderr=slave, env=env, cwd=ROOT,
                                     start_new_session=True)
        os.close(slave)
        self.text = ""
        self._reading = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:  # a terminal not read fills up and blocks the writer
        while self._reading:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.text += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the command's side closed
                    return

    def wait_for(self, text: str, timeout: float = 60) -> None:
        """Until the command has written ``text`` (it must not end first)."""
        deadline = time.monotonic() + timeout
        while text not in self.text:
            assert self.proc.poll() is None and time.monotonic() < deadline, self.text[-3000:]
            time.sleep(0.05)

    def hang_up(self) -> None:
        self._reading = False
        self._reader.join(5)
        os.close(self.master)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
