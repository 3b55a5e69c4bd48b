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

# What the screenshot script and the GUI benchmark play into the virtual speaker and microphone.
SPEECH_THEM = ("The quarterly report shows strong growth in every region, and the board is "
               "pleased with the results of the last three months.")
SPEECH_YOU = "Could you please repeat the last number? I did not hear it clearly over the noise."


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

    def __enter__(self) -> Xvfb:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def pump(app, seconds: float, until=None) -> bool:
    """Run Qt's own event loop for ``seconds`` (or until ``until()``), as ``app.exec()`` would."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    done = {"ok": until is None}

    def check() -> None:
        if until is not None and until():
            done["ok"] = True
            loop.quit()
    poll = QTimer(interval=50)
    poll.timeout.connect(check)
    poll.start()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    check()
    if not done["ok"] or until is None:
        loop.exec()
    poll.stop()
    return done["ok"]


def prepare_desktop_run(prefix: str) -> tuple[Path, Path, Path, Path]:
    """For a script that runs the app: private voxcap folders in a new temp dir, the tiny model
    and the two speech files. Returns (temp dir, model dir, "Them" wav, "You" wav)."""
    import tempfile

    from voxcap.engine.model.tiny import write_tiny_model

    from .pulse import speech_wav

    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    for name in ("CONFIG", "DATA", "CACHE"):
        os.environ[f"VOXCAP_{name}_DIR"] = str(tmp / name.lower())
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    model = write_tiny_model(tmp / "tiny-model")
    them = speech_wav(tmp / "them.wav", SPEECH_THEM)
    you = speech_wav(tmp / "you.wav", SPEECH_YOU, rate=44100)
    return tmp, model, them, you
