"""The app as a newcomer walks it (tests/install's walks): read over AT-SPI from another process
(support/atspi.py), pressed and typed into through its real widgets, a screenshot of each step.

    w = Walk(bus, xvfb, app_pid, shots_folder)
    tree = until(w.tree, lambda t: labels(t).get("Engine status", "").startswith("…"), 60, "…")
    w.press("push button", "Start captioning"); w.shot("captioning")
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from support.atspi import AtspiBus, walk
from support.xvfb import Xvfb
from voxcap.setting_refs import MARKER

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")  # a command-line flag in a text


def labels(tree: dict) -> dict[str, str]:
    """A status label's description (what it is) -> its accessible name (what it says)."""
    return {n["description"].split(". ")[0]: n["name"] for n in walk(tree)
            if n.get("role") == "label" and n.get("description")}


def node(tree: dict, role: str, name: str) -> dict | None:
    """The node of that role named ``name`` exactly, else the first whose name starts so."""
    nodes = [n for n in walk(tree) if n.get("role") == role
             and str(n.get("name", "")).startswith(name)]
    return next((n for n in nodes if n.get("name") == name), nodes[0] if nodes else None)


def until(read, check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if check(value):
            return value
        assert time.monotonic() < deadline, f"{what}: never happened; last seen {value}"
        time.sleep(1.0)


def reads_well(text: str, where: str, terminal: bool = False) -> None:
    """What a newcomer reads: no traceback; in the app, no command-line flag."""
    assert "Traceback" not in text and "Error:" not in text.replace("Engine error:", ""), where
    assert MARKER.search(text) is None, f"{where}: a setting's marker not worded: {text}"
    if not terminal:
        assert FLAG.findall(text) == [], f"{where}: flags {FLAG.findall(text)}: {text}"


def walk_env(x: Xvfb, bus: AtspiBus, pulse_server: str, home: Path, drop: tuple[str, ...] = (),
             **extra: str) -> dict[str, str]:
    """This process's environment for the app walked under ``x``: its display, the AT-SPI bus,
    the sound server, one vLLM thread without binding, voxcap's folders in ``home``; none of the
    variables that would send it elsewhere (nor ``drop``); ``extra`` on top."""
    leave = {"XDG_RUNTIME_DIR", "TORCHINDUCTOR_CACHE_DIR", "VLLM_RPC_BASE_PATH", "QT_QPA_PLATFORM",
             "WAYLAND_DISPLAY", *drop}
    env = {k: v for k, v in os.environ.items() if k not in leave}
    env.update(DISPLAY=x.display, DBUS_SESSION_BUS_ADDRESS=bus.address,
               QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", PULSE_SERVER=pulse_server,
               OMP_NUM_THREADS="1", VLLM_CPU_OMP_THREADS_BIND="nobind",
               **{f"VOXCAP_{n.upper()}_DIR": str(home / n) for n in ("config", "data", "state", "cache")},
               **extra)
    return env


class AppProcess:
    """``argv`` (``voxcap gui`` or a launcher of it) in a process group of its own, and the lines
    its log gains from now on (``home``/state/voxcap.log)."""

    READY = "The engine: ready"

    def __init__(self, argv: list[str], env: dict, home: Path, output) -> None:
        self.log = home / "state" / "voxcap.log"
        self.logged_from = self.log.stat().st_size if self.log.exists() else 0
        self.proc = subprocess.Popen(argv, env=env, stdout=output, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[self.logged_from:]
        except OSError:
            return ""

    def wait_ready(self, timeout: float = 600) -> float:
        """Seconds until the engine was ready (AssertionError with the log's end: it ended, or
        not within ``timeout``)."""
        t0 = time.monotonic()
        while self.READY not in self.text():
            assert self.proc.poll() is None and time.monotonic() - t0 < timeout, \
                f"the app did not get ready:\n{self.text()[-3000:]}"
            time.sleep(0.2)
        return time.monotonic() - t0


class WalkedApp(AppProcess):
    """An AppProcess read and driven over AT-SPI (``walk``), its captioning state by name."""

    def __init__(self, argv: list[str], env: dict, home: Path, output, bus: AtspiBus, x: Xvfb,
                 shots: Path) -> None:
        super().__init__(argv, env, home, output)
        self.walk = Walk(bus, x, self.proc.pid, shots)
        self.bus = bus

    def state(self) -> str:
        return labels(self.walk.tree()).get("Captioning state", "")

    def wait_state(self, text: str, timeout: float = 120) -> None:
        until(self.state, lambda s: s == text, timeout, f"captioning state {text!r}")


class Walk:
    def __init__(self, bus: AtspiBus, x: Xvfb, pid: int, shots: Path) -> None:
        self.bus, self.x, self.pid, self.shots, self.n = bus, x, pid, shots, 0

    def tree(self) -> dict:
        return self.bus.dump(self.pid)

    def press(self, role: str, name: str) -> None:
        self.bus.do(self.pid, role, name)

    def type(self, name: str, text: str) -> None:
        self.bus.do(self.pid, "entry|text", name, "text", text)

    def shot(self, name: str) -> Path:
        self.n += 1
        time.sleep(0.5)  # the last repaint
        return self.x.screenshot(self.shots / f"{self.n}-{name}.png")


def overlay(tree: dict) -> str:
    """The rows on the overlay, as a screen reader reads them."""
    return next((n["description"] for n in walk(tree) if n.get("name") == "Live captions"),
                "No captions yet")


def caption_words(row: str) -> list[str]:
    """The words of an overlay row, without the speaker's label ("Them: ...")."""
    label, sep, rest = row.partition(": ")
    return (rest if sep and label in ("Them", "You") else row).split()


def processes_of(session_id: int) -> list[int]:
    """The processes of a session (``start_new_session=True``): what an app left running."""
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.getsid(int(proc.name)) == session_id:
                out.append(int(proc.name))
        except OSError:
            continue
    return out
