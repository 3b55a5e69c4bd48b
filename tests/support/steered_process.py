"""The test's side of an app process steered by lines on stdin (``app_process.steer_by_stdin``):
it starts the script with voxcap's folders under ``tmp_path`` and accessibility on, reads the
lines it prints, sends commands, and quits it.

    app = SteeredProcess([sys.executable, SCRIPT, *args], tmp_path)   # waits for "pid N"
    app.send("caption")          # waits for "done caption"
    app.wait_line("rect ")       # the first line starting so (removed from ``lines``)
    app.close()
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path


class SteeredProcess:
    def __init__(self, argv: list[str], tmp_path: Path, env: dict | None = None) -> None:
        """``env``: more environment (e.g. the config folder of a ``voxcap serve`` run by the
        same user on this computer)."""
        env = {**os.environ, "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb",
               **{f"VOXCAP_{name}_DIR": str(tmp_path / name.lower())
                  for name in ("CONFIG", "DATA", "CACHE", "STATE")}, **(env or {})}
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.pid = int(self.wait_line("pid ").split()[1])

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self._cv:
                self.lines.append(line.strip())
                self._cv.notify_all()

    def wait_line(self, prefix: str, timeout: float = 30) -> str:
        with self._cv:
            ok = self._cv.wait_for(lambda: any(x.startswith(prefix) for x in self.lines), timeout)
            assert ok, f"the app never said {prefix!r}: {self.lines}"
            line = next(x for x in self.lines if x.startswith(prefix))
            self.lines.remove(line)
            return line

    def send(self, cmd: str) -> None:
        """Send a command and wait until the app says it handled it."""
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        self.wait_line(f"done {cmd}")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(15)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(5)
