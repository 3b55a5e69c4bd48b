"""The test side of ``support.overlay_app``: the app in its own process on a given desktop
session, asked for its state line by line; screenshot helpers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from PySide6.QtGui import QColor, QImage

ROOT = Path(__file__).resolve().parents[2]


class AppProcess:
    """tests/support/overlay_app.py in its own process, on the compositor in ``env``."""

    def __init__(self, env: dict, config: Path) -> None:
        full = {k: v for k, v in os.environ.items()
                if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
        full.update(env, VOXCAP_CONFIG_DIR=str(config), PYTHONPATH=str(ROOT / "tests"),
                    QT_ACCESSIBILITY="0")
        errors = None if os.environ.get("VOXCAP_DEBUG") else subprocess.DEVNULL  # the app's log
        self.proc = subprocess.Popen([sys.executable, "-m", "support.overlay_app"], env=full,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                     text=True, cwd=ROOT, start_new_session=True)
        self.started = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, "the app exited"
        return json.loads(line)

    def ask(self, cmd: str) -> dict:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._read()

    def wait_for(self, pred, timeout: float = 15.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            st = self.ask("state")
            if pred(st) or time.monotonic() > deadline:
                return st
            time.sleep(0.2)

    def quit(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask("quit")
                self.proc.wait(30)
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait(10)


def keep(shot: Path, name: str) -> None:
    where = os.environ.get("VOXCAP_SHOTS")
    if where:
        shutil.copy(shot, ROOT / where / name)


def pixel(img: QImage, x: int, y: int) -> tuple[int, int, int]:
    c = QColor(img.pixel(x, y))
    return c.red(), c.green(), c.blue()
