"""What the window shows is what a screen reader was just told, the moment the engine's status
changes: the real app on the real remote engine under Xvfb, read over AT-SPI from another
process, its screen pixels (``import -window root``) compared with what the status label
renders for its current text. The server is first down (the engine retries, saying when), then
a server comes up that is no vLLM server (an error: painted, announced, wrapped inside the
window, with a Retry button), then Retry is pressed over AT-SPI (it starts again)."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from support.atspi import AtspiBus, pyatspi_available, walk
from support.steered_process import SteeredProcess
from support.vllm_server import free_port
from support.xvfb import Xvfb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]
APP = Path(__file__).resolve().parents[1] / "support" / "remote_status_app.py"
SHOTS = Path(os.environ.get("VOXCAP_SHOTS", "")) if os.environ.get("VOXCAP_SHOTS") else None


class StatusApp(SteeredProcess):
    def __init__(self, url: str, tmp_path: Path) -> None:
        super().__init__([sys.executable, str(APP), url], tmp_path)
        self.tmp = tmp_path

    def rendered(self) -> tuple[np.ndarray, tuple[int, int, int, int]]:
        """What the status label renders now, and where it is on the screen."""
        path = self.tmp / "label.png"
        self.send(f"grab {path}")
        rect = tuple(int(v) for v in self.wait_line("rect ").split()[1:])
        self.window = tuple(int(v) for v in self.wait_line("window ").split()[1:])
        return np.asarray(Image.open(path).convert("RGB")), rect


def on_screen(x: Xvfb, rect, path: Path) -> np.ndarray:
    left, top, w, h = rect
    subprocess.run(["import", "-display", x.display, "-window", "root", "-crop",
                    f"{w}x{h}+{left}+{top}", "+repage", str(path)], check=True, timeout=30)
    return np.asarray(Image.open(path).convert("RGB"))


def engine_status(bus: AtspiBus, pid: int) -> tuple[str, dict]:
    tree = bus.dump(pid)
    label = next(n for n in walk(tree) if n.get("role") == "label"
                 and str(n.get("description", "")).startswith("Engine status"))
    return label["name"], tree


def until_status(bus, pid, check, timeout: float) -> tuple[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        name, tree = engine_status(bus, pid)
        if check(name) or time.monotonic() > deadline:
            return name, tree
        time.sleep(0.3)


def painted_now(app: StatusApp, x: Xvfb, tmp_path: Path, tries: int = 3) -> bool:
    """The screen shows exactly what the label renders for its text now (a text that counts
    up each second may change between the two reads: a few tries)."""
    for i in range(tries):
        want, rect = app.rendered()
        seen = on_screen(x, rect, tmp_path / f"screen{i}.png")
        if seen.shape == want.shape and np.array_equal(seen, want):
            return True
        time.sleep(0.2)
    return False


class NotVllm(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_error(404)

    def log_message(self, *args):
        pass


def test_status_is_painted_as_announced_and_retry_starts_again(tmp_path):
    port = free_port()
    with Xvfb(1024, 768) as x, AtspiBus() as bus:  # a small screen, as in the issue
        listener = bus.listen()
        app = StatusApp(f"ws://127.0.0.1:{port}", tmp_path)
        httpd = None
        try:
            # nothing listens: the engine waits for the server, says why and when it tries again
            name, _ = until_status(bus, app.pid, lambda n: "retrying in" in n, 30)
            assert name.startswith("Engine: waiting for the server"), name
            assert "connection refused" in name and "retrying in" in name, name
            assert "first start" not in name, name  # a server's start time is not ours to say
            assert painted_now(app, x, tmp_path), "the window does not show the status it says"
            if SHOTS:
                x.screenshot(str(SHOTS / "engine-waiting-for-server.png"))

            # a server comes up, but not a vLLM one: picked up at the next try, an error
            httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), NotVllm)
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            name, tree = until_status(bus, app.pid, lambda n: n.startswith("Engine error"), 30)
            assert name == (f"Engine error: Which model of the server at ws://127.0.0.1:{port}? "
                            "(it does not list its models)."), name
            assert painted_now(app, x, tmp_path), "the error is said but not shown"
            want, (left, top, w, h) = app.rendered()
            assert left + w <= 1024 and h > 0  # inside the screen, wrapped, not cut off
            wx, wy, ww, wh = app.window
            assert ww <= 1024 and wh <= 768, app.window  # the window fits the screen
            error = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                      and "Engine error" in ev["data"], 10)
            assert error is not None and error["detail1"] == 2, listener.events  # assertive
            buttons = [n for n in walk(tree) if n.get("role") == "push button"]
            assert any(n["name"] == "Retry" for n in buttons), [n["name"] for n in buttons]
            if SHOTS:
                x.screenshot(str(SHOTS / "engine-error-retry.png"))

            # Retry (pressed as a screen reader user would): the engine starts again
            seen = len([ev for ev in listener.events if ev["type"] == "object:announcement"
                        and "Engine error" in ev["data"]])
            bus.do(app.pid, "push button", "Retry")
            restarting = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                           and "Engine restarting: retry" in ev["data"], 20)
            assert restarting is not None, listener.events
            again = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                      and "Engine error" in ev["data"] and listener.events.index(
                                          ev) >= seen + 1 and ev is not error, 30)
            assert again is not None, listener.events
            name, _ = until_status(bus, app.pid, lambda n: n.startswith("Engine error"), 10)
            assert name.startswith("Engine error: Which model of the server"), name
            assert painted_now(app, x, tmp_path)
        finally:
            app.close()
            listener.stop()
            if httpd is not None:
                httpd.shutdown()
                httpd.server_close()
