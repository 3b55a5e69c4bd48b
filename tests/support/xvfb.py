"""A private Xvfb X server (our own child process) for screenshots and GUI benchmarks.

    with Xvfb(1600, 900) as x:          # sets DISPLAY and QT_QPA_PLATFORM=xcb in os.environ
        ...
        x.screenshot("root.png")        # ImageMagick's `import -window root`: the whole screen
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path


class Xvfb:
    def __init__(self, width: int = 1600, height: int = 900, depth: int = 24) -> None:
        self.size = f"{width}x{height}x{depth}"
        self.proc: subprocess.Popen | None = None
        self.compositor: subprocess.Popen | None = None
        self.display = ""
        self._saved: dict[str, str | None] = {}

    def start(self) -> Xvfb:
        if shutil.which("Xvfb") is None:
            raise RuntimeError("Xvfb is not installed: run scripts/setup-dev.sh")
        for n in range(91, 140):
            if Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
                continue
            self.proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", self.size, "-nolisten",
                                          "tcp", "-noreset"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if Path(f"/tmp/.X11-unix/X{n}").exists():
                    self.display = f":{n}"
                    for key, value in (("DISPLAY", self.display), ("QT_QPA_PLATFORM", "xcb")):
                        self._saved.setdefault(key, os.environ.get(key))
                        os.environ[key] = value
                    return self
                time.sleep(0.05)
            self.stop()
        raise RuntimeError("Xvfb did not start")

    def start_compositor(self) -> bool:
        """xcompmgr, so translucent windows look as on a desktop (a bare X server shows their
        transparent parts black). False if it is not installed."""
        if shutil.which("xcompmgr") is None:
            return False
        self.compositor = subprocess.Popen(["xcompmgr", "-d", self.display],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True)
        time.sleep(0.5)
        return self.compositor.poll() is None

    def screenshot(self, path: str | Path) -> Path:
        subprocess.run(["import", "-display", self.display, "-window", "root", str(path)],
                       check=True, capture_output=True, timeout=60)
        return Path(path)

    def stop(self) -> None:
        for proc in (self.compositor,):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(5)
        self.compositor = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()

    def __enter__(self) -> Xvfb:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
