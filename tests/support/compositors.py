"""Real Wayland compositors started headless for the overlay tests (our own child processes).

    with Sway(outputs=2) as sway:     # WLR_BACKENDS=headless, pixman renderer, debug log
        sway.env                      # WAYLAND_DISPLAY/XDG_RUNTIME_DIR/SWAYSOCK for a client
        sway.msg("-t", "get_tree")    # swaymsg, parsed JSON
        sway.screenshot(path)         # grim: what the compositor shows, layers included
        sway.log_text()               # sway's debug log ("new layer surface: namespace ...")

sway refuses to run as root (it checks that it cannot regain root after dropping it), so as
root it runs as ``nobody`` with a runtime folder of its own; root clients can still connect.

Outputs come and go: sway 1.7's headless backend can neither disable nor unplug one, so with
``nested=True`` the sway under test runs on a headless sway's Wayland display, each of its
outputs a window there (WL-1, WL-2...): ``remove_output`` closes that window (the output is
destroyed, as when a monitor is unplugged), ``add_output`` makes a new one (WL-3...).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOBODY = 65534


def missing(*programs: str) -> list[str]:
    return [p for p in programs if shutil.which(p) is None]


def unmount_under(runtime: Path) -> None:
    """A session's D-Bus may have started the document portal, whose FUSE mount
    (``$XDG_RUNTIME_DIR/doc``) outlives the portal killed with the group: a stat in it then
    fails with ECONNABORTED (seen: shutil.rmtree raised it). Unmount what is under ``runtime``."""
    root = os.path.realpath(runtime)
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in sorted((p for p in points if p == root or p.startswith(root + "/")), reverse=True):
        tool = ["umount", "-l", point] if os.geteuid() == 0 else ["fusermount3", "-u", "-z", point]
        done = subprocess.run(tool, capture_output=True, text=True)
        if done.returncode:
            print(f"could not unmount {point}: {done.stderr.strip()}", file=sys.stderr)


def remove_runtime(runtime: Path) -> None:
    """Remove a session's runtime folder, its mounts first."""
    unmount_under(runtime)
    try:
        shutil.rmtree(runtime)
    except OSError as err:
        print(f"could not remove {runtime}: {err}", file=sys.stderr)


class _Compositor:
    """What the headless compositors share: their log, stopping their process group (they run in
    a session of their own with their helpers: XWayland, dbus...), a context manager."""

    proc: subprocess.Popen | None
    log_path: Path
    runtime: Path

    def start(self):
        raise NotImplementedError

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def _stop_process(self, group: bool) -> None:
        if self.proc is not None and self.proc.poll() is None:
            if group:
                os.killpg(self.proc.pid, signal.SIGTERM)
            else:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                if group:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        if getattr(self, "_log", None):
            self._log.close()
        atexit.register(self.log_path.unlink, missing_ok=True)  # read by failing tests until then

    def stop(self) -> None:
        self._stop_process(group=True)
        remove_runtime(self.runtime)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Sway(_Compositor):
    def __init__(self, outputs: int = 1, width: int = 1280, height: int = 720,
                 xwayland: bool = False, nested: bool = False) -> None:
        self.outputs, self.width, self.height, self.xwayland = outputs, width, height, xwayland
        self.nested = nested
        self.outer: Sway | None = None
        self.proc: subprocess.Popen | None = None
        self.runtime = Path(tempfile.mkdtemp(prefix="voxcap-sway-"))
        self.log_path = self.runtime.parent / (self.runtime.name + ".log")
        self.env: dict[str, str] = {}

    def start(self) -> Sway:
        if missing("sway", "swaymsg"):
            raise RuntimeError("sway is not installed: run scripts/setup-dev.sh")
        conf = self.runtime / "config"
        lines = [f"output HEADLESS-1 resolution {self.width}x{self.height} position 0 0",
                 "default_border none", f"xwayland {'enable' if self.xwayland else 'disable'}"]
        backend = {"WLR_BACKENDS": "headless", "WLR_HEADLESS_OUTPUTS": "1"}
        if self.nested:  # outputs as windows of a headless sway as wide as all of them
            self.outer = Sway(1, self.width * self.outputs, self.height).start()
            self.runtime = self.outer.runtime
            conf = self.runtime / "nested-config"
            lines = lines[1:]
            backend = {"WLR_BACKENDS": "wayland", "WLR_WL_OUTPUTS": str(self.outputs),
                       "WAYLAND_DISPLAY": "wayland-1"}
            self.log_path = self.runtime.parent / (self.runtime.name + "-nested.log")
        conf.write_text("\n".join(lines) + "\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.runtime),
               "XDG_RUNTIME_DIR": str(self.runtime), "WLR_LIBINPUT_NO_DEVICES": "1",
               "WLR_RENDERER": "pixman", **backend}
        cmd = ["sway", "-d", "-c", str(conf)]
        if os.getuid() == 0:
            os.chown(self.runtime, NOBODY, NOBODY)
            os.chown(conf, NOBODY, NOBODY)
            cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + cmd
        os.chmod(self.runtime, 0o700)
        self._log = open(self.log_path, "wb")  # closed in stop()
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        display = "wayland-2" if self.nested else "wayland-1"
        while time.monotonic() < deadline:
            socks = [p for p in self.runtime.glob("sway-ipc.*.sock")
                     if self.outer is None or str(p) != self.outer.env["SWAYSOCK"]]
            if socks and (self.runtime / display).exists():
                self.env = {"WAYLAND_DISPLAY": display, "XDG_RUNTIME_DIR": str(self.runtime),
                            "SWAYSOCK": str(socks[0]), "XDG_SESSION_TYPE": "wayland",
                            "XDG_CURRENT_DESKTOP": "sway"}
                for n in range(2, self.outputs + 1) if not self.nested else ():
                    self.add_output()
                    self.msg(f"output HEADLESS-{n} resolution {self.width}x{self.height} "
                             f"position {(n - 1) * self.width} 0")
                self.wait_outputs(self.outputs)
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"sway did not start: {self.log_text()[-2000:]}")

    def msg(self, *args: str):
        out = subprocess.run(["swaymsg", "-s", self.env["SWAYSOCK"], "-r", *args],
                             capture_output=True, text=True, timeout=20)
        try:
            return json.loads(out.stdout)
        except json.JSONDecodeError:
            return out.stdout

    def add_output(self) -> None:
        self.msg("create_output")

    def remove_output(self, name: str) -> None:
        """Nested only: close the output's window in the outer sway (the output is destroyed)."""
        self.outer.msg(f'[title="wlroots - {name}"] kill')

    def wait_outputs(self, count: int, timeout: float = 10.0) -> list[dict]:
        """Until ``count`` outputs are there, each of the set size (nested: the outer windows
        are laid out a moment after they appear; one alone takes the whole outer width)."""
        deadline = time.monotonic() + timeout
        while True:
            outs = [o for o in self.msg("-t", "get_outputs") if o.get("active")]
            width = self.width * self.outputs // count if self.nested else self.width
            if len(outs) == count and all(o["rect"]["width"] == width for o in outs) or \
                    time.monotonic() > deadline:
                return outs
            time.sleep(0.1)

    def output_names(self) -> list[str]:
        return [o["name"] for o in self.msg("-t", "get_outputs") if o.get("active")]

    def screenshot(self, path, output: str | None = None) -> Path:
        cmd = ["grim"] + (["-o", output] if output else []) + [str(path)]
        subprocess.run(cmd, env={**os.environ, **self.env}, check=True, timeout=30,
                       capture_output=True)
        return Path(path)

    def stop(self) -> None:
        self._stop_process(group=False)
        if self.outer is not None:
            self.outer.stop()
            self.outer = None
        remove_runtime(self.runtime)


class Mutter(_Compositor):
    """GNOME's compositor headless on a virtual monitor, with XWayland; in its own D-Bus
    session. Its session environment (DISPLAY of XWayland among it) is what the child it runs
    sees: that child writes it to a file and waits."""

    def __init__(self, width: int = 1280, height: int = 720, xwayland: bool = True) -> None:
        self.size = f"{width}x{height}"
        self.xwayland = xwayland
        self.runtime = Path(tempfile.mkdtemp(prefix="voxcap-mutter-"))
        os.chmod(self.runtime, 0o700)
        self.log_path = self.runtime.parent / (self.runtime.name + ".log")
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}

    def start(self) -> Mutter:
        if missing("mutter", "dbus-run-session", *(["Xwayland"] if self.xwayland else [])):
            raise RuntimeError("mutter/Xwayland/dbus are not installed: run scripts/setup-dev.sh")
        env_file = self.runtime / "session.env"
        child = ("import json, os, sys, time; open(sys.argv[1], 'w').write(json.dumps("
                 "dict(os.environ))); time.sleep(3600)")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.runtime),
               "XDG_RUNTIME_DIR": str(self.runtime), "XDG_CURRENT_DESKTOP": "GNOME",
               "XDG_SESSION_TYPE": "wayland"}
        if self.xwayland:  # Xwayland's socket folder, made as X servers make it: mutter refused
            _x11_socket_folder()  # "/tmp/.X11-unix is not writable" once on a fresh machine
        self._log = open(self.log_path, "wb")  # closed in stop()
        self.proc = subprocess.Popen(
            ["dbus-run-session", "--", "mutter", "--headless", "--wayland", "--virtual-monitor",
             self.size, *([] if self.xwayland else ["--no-x11"]), "--", sys.executable, "-c",
             child, str(env_file)],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if env_file.exists() and env_file.stat().st_size:
                seen = json.loads(env_file.read_text())
                self.env = {k: seen[k] for k in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR",
                                                  "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS")
                            if k in seen}
                self.env.update(XDG_CURRENT_DESKTOP="GNOME", XDG_SESSION_TYPE="wayland")
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"mutter did not start: {self.log_text()[-2000:]}")

    def xprop(self, *args: str) -> str:
        return subprocess.run(["xprop", *args], env={**os.environ, **self.env},
                              capture_output=True, text=True, timeout=20).stdout



class KWin(_Compositor):
    """KDE Plasma's compositor, KWin, on a virtual framebuffer (``kwin_wayland --virtual``) in
    its own D-Bus session; ``screenshot`` asks KWin itself (ScreenShot2, the permission check
    off for the test). Debian's kwin_wayland carries a file capability (CAP_SYS_NICE) that a
    container may not grant, so a copy without it is run."""

    def __init__(self, width: int = 1280, height: int = 720) -> None:
        self.width, self.height = width, height
        self.runtime = Path(tempfile.mkdtemp(prefix="voxcap-kwin-"))
        os.chmod(self.runtime, 0o700)
        self.log_path = self.runtime.parent / (self.runtime.name + ".log")
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}

    def start(self) -> KWin:
        kwin = shutil.which("kwin_wayland")
        if kwin is None or missing("dbus-run-session"):
            raise RuntimeError("kwin_wayland is not installed: run scripts/setup-dev.sh")
        binary = self.runtime / "kwin_wayland"
        shutil.copy(kwin, binary)  # the copy has no file capabilities
        env_file = self.runtime / "session.env"
        child = ("import json, os, sys, time; open(sys.argv[1], 'w').write(json.dumps("
                 "dict(os.environ))); time.sleep(3600)")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.runtime),
               "XDG_RUNTIME_DIR": str(self.runtime), "QT_QPA_PLATFORM": "offscreen",
               "KWIN_SCREENSHOT_NO_PERMISSION_CHECKS": "1", "KWIN_WAYLAND_NO_PERMISSION_CHECKS": "1",
               "XDG_CURRENT_DESKTOP": "KDE"}
        self._log = open(self.log_path, "wb")  # closed in stop()
        self.proc = subprocess.Popen(
            ["dbus-run-session", "--", str(binary), "--virtual", "--width", str(self.width),
             "--height", str(self.height), "--socket", "wayland-kde", "--exit-with-session",
             f"{sys.executable} -c \"{child}\" {env_file}"],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if env_file.exists() and env_file.stat().st_size:
                seen = json.loads(env_file.read_text())
                self.env = {"WAYLAND_DISPLAY": seen["WAYLAND_DISPLAY"],
                            "XDG_RUNTIME_DIR": str(self.runtime),
                            "DBUS_SESSION_BUS_ADDRESS": seen["DBUS_SESSION_BUS_ADDRESS"],
                            "XDG_CURRENT_DESKTOP": "KDE", "XDG_SESSION_TYPE": "wayland"}
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"kwin_wayland did not start: {self.log_text()[-2000:]}")

    def activation_env(self, **extra: str) -> None:
        """Services the session bus starts (the desktop portal and its KDE backend) get the
        session's Wayland display, as a Plasma session's start-up gives them."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        bus = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
        with open_dbus_connection(self.env["DBUS_SESSION_BUS_ADDRESS"]) as conn:
            conn.send_and_get_reply(new_method_call(bus, "UpdateActivationEnvironment", "a{ss}",
                                                    ({**self.env, **extra},)))

    def screenshot(self, path) -> Path:
        """The screen as KWin composites it (org.kde.KWin.ScreenShot2 into a pipe)."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        from PySide6.QtGui import QImage

        r, w = os.pipe()
        with open_dbus_connection(self.env["DBUS_SESSION_BUS_ADDRESS"], enable_fds=True) as conn:
            addr = DBusAddress("/org/kde/KWin/ScreenShot2", bus_name="org.kde.KWin",
                               interface="org.kde.KWin.ScreenShot2")
            reply = conn.send_and_get_reply(
                new_method_call(addr, "CaptureActiveScreen", "a{sv}h", ({}, w)), timeout=20)
            os.close(w)
            data = b""
            while chunk := os.read(r, 1 << 20):
                data += chunk
        os.close(r)
        meta = {k: v[1] for k, v in reply.body[0].items()}
        img = QImage(data, meta["width"], meta["height"], meta["stride"], QImage.Format(meta["format"]))
        img.save(str(path))
        return Path(path)


def _x11_socket_folder() -> None:
    folder = Path("/tmp/.X11-unix")
    folder.mkdir(mode=0o1777, exist_ok=True)
    if folder.stat().st_uid == os.getuid():
        folder.chmod(0o1777)
