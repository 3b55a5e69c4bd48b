"""A private D-Bus session with the AT-SPI registry, and a screen reader's view of an app on it.

    with AtspiBus() as bus:                          # sets DBUS_SESSION_BUS_ADDRESS
        listener = bus.listen()                      # announcements, name changes (JSON lines)
        ... start the app (QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1) ...
        tree = bus.dump(pid)                         # the app's whole accessible tree
        listener.wait_for(lambda ev: ev["type"] == "object:announcement", 10)

The reading runs ``atspi_reader.py`` under the system python3 (Debian's python3-pyatspi), as
Orca would: over D-Bus, from another process. The bus and everything it activated
(at-spi-bus-launcher, at-spi2-registryd) are one process group, ended together.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"
READER = str(Path(__file__).with_name("atspi_reader.py"))


def pyatspi_available() -> bool:
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class Listener:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.events: list[dict] = []
        self._q: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self._q.put(json.loads(line))
            except ValueError:
                continue

    def wait_for(self, match, timeout: float) -> dict | None:
        """The first event (seen before or now) for which ``match(event)`` is true."""
        for ev in self.events:
            if match(ev):
                return ev
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ev = self._q.get(timeout=0.1)
            except queue.Empty:
                continue
            self.events.append(ev)
            if match(ev):
                return ev
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class AtspiBus:
    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.address = ""
        self._saved: str | None = None

    def start(self) -> AtspiBus:
        self.proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     start_new_session=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon did not start")
        self._saved = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.address
        return self

    def listen(self) -> Listener:
        proc = subprocess.Popen([SYSTEM_PYTHON, READER, "listen"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        listener = Listener(proc)
        if listener.wait_for(lambda ev: ev.get("type") == "listening", 30) is None:
            raise RuntimeError("the AT-SPI listener did not start")
        return listener

    def dump(self, app: int | str, timeout: float = 60) -> dict:
        out = subprocess.run([SYSTEM_PYTHON, READER, "dump", str(app)], capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"reading the app through AT-SPI failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout)

    def apps(self, timeout: float = 60) -> list[dict]:
        """Every application on the bus: name, pid, windows (what a screen reader lists)."""
        out = subprocess.run([SYSTEM_PYTHON, READER, "apps"], capture_output=True, text=True,
                             timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"listing the AT-SPI applications failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout)

    def do(self, app: int | str, role: str, name: str, what: str = "press", text: str = "",
           timeout: float = 60) -> None:
        """Press the first ``role`` named ``name…`` of the app (or set its text), over AT-SPI."""
        out = subprocess.run([SYSTEM_PYTHON, READER, "do", str(app), role, name, what,
                              *([text] if what == "text" else [])], capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"AT-SPI {what} on {role} {name!r} failed: {out.stderr[-2000:]}")

    def keys(self, *combos: str, timeout: float = 30) -> list[float]:
        """Type ``combos`` ("alt+p", "ctrl+shift+o", "Right") on $DISPLAY as a keyboard does, into
        the window that has the focus (not through a control's action: what Alt and F1 reach).
        Returns when each combo's last key went down (time.time(), as listened events' "at")."""
        out = subprocess.run([SYSTEM_PYTHON, READER, "keys", *combos], capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"typing {combos} failed: {out.stderr[-2000:]}")
        return [json.loads(line)["at"] for line in out.stdout.splitlines() if '"pressed"' in line]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        self.proc = None
        if self._saved is None:
            os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
        else:
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = self._saved

    def __enter__(self) -> AtspiBus:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def walk(node: dict):
    """Every node of a dumped tree, depth first."""
    yield node
    for child in node.get("children", ()):
        yield from walk(child)


def until(read, check, timeout: float = 20):
    """``read()`` again every 0.5 s until ``check`` accepts it or ``timeout`` passes; the last."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if check(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def overlay_node(tree: dict) -> dict:
    """The caption overlay in a dumped tree."""
    return next(n for n in walk(tree) if n.get("name") == "Live captions")
