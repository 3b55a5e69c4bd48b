"""A real OBS Studio (Debian's obs-studio, obs-websocket 5 built in) under a private Xvfb,
streaming a tiny test scene to an RTMP receiver on loopback (ffmpeg ``-listen 1``), and the
CEA-608 closed captions read back out of what it received.

    with ObsStudio(tmp_path) as obs:      # websocket on obs.ws_port, no password
        ... start streaming, send captions ...
        obs.stop_receiver()
        text = captions_in(obs.flv)       # the characters of every caption, in order
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .xvfb import Xvfb


def available() -> bool:
    return bool(shutil.which("obs") and shutil.which("ffmpeg") and shutil.which("Xvfb"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_config(home: Path, ws_port: int, rtmp: str, password: str) -> None:
    cfg = home / ".config" / "obs-studio"
    (cfg / "basic" / "profiles" / "Untitled").mkdir(parents=True)
    (cfg / "basic" / "scenes").mkdir(parents=True)
    (cfg / "global.ini").write_text(
        "[General]\nFirstRun=true\nEnableAutoUpdates=false\n[BasicWindow]\nSysTrayEnabled=false\n"
        "[Basic]\nProfile=Untitled\nProfileDir=Untitled\nSceneCollection=Untitled\n"
        "SceneCollectionFile=Untitled\n"
        f"[OBSWebSocket]\nFirstLoad=false\nServerEnabled=true\nServerPort={ws_port}\n"
        f"AlertsEnabled=false\nAuthRequired={'true' if password else 'false'}\n"
        f"ServerPassword={password}\n")
    profile = cfg / "basic" / "profiles" / "Untitled"
    (profile / "basic.ini").write_text(
        "[General]\nName=Untitled\n[Video]\nBaseCX=320\nBaseCY=180\nOutputCX=320\nOutputCY=180\n"
        "FPSType=0\nFPSCommon=10\n[Output]\nMode=Simple\n[SimpleOutput]\nVBitrate=200\n"
        "ABitrate=64\nStreamEncoder=x264\nPreset=ultrafast\n")
    (profile / "service.json").write_text(json.dumps({
        "settings": {"server": rtmp, "key": "test", "use_auth": False, "bwtest": False},
        "type": "rtmp_custom"}))


class ObsStudio:
    def __init__(self, workdir: Path, password: str = "") -> None:
        self.workdir = Path(workdir)
        self.password = password
        self.ws_port = _free_port()
        self.rtmp_port = _free_port()
        self.flv = self.workdir / "received.flv"
        self.x = Xvfb(640, 360)
        self.receiver = self.obs = None

    def start(self) -> ObsStudio:
        home = self.workdir / "home"
        _write_config(home, self.ws_port, f"rtmp://127.0.0.1:{self.rtmp_port}/live", self.password)
        self.receiver = subprocess.Popen(
            ["ffmpeg", "-hide_banner", "-loglevel", "error", "-listen", "1", "-i",
             f"rtmp://127.0.0.1:{self.rtmp_port}/live/test", "-c", "copy", "-f", "flv",
             str(self.flv)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        self.x.start()
        env = {**os.environ, "HOME": str(home), "DISPLAY": self.x.display,
               "LIBGL_ALWAYS_SOFTWARE": "1", "QT_QPA_PLATFORM": "xcb"}
        self.obs = subprocess.Popen(["obs", "--disable-shutdown-check", "--disable-updater",
                                     "--multi"], env=env, cwd=home, stdin=subprocess.DEVNULL,
                                    stdout=open(self.workdir / "obs.log", "wb"),
                                    stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.ws_port)) == 0:
                    return self
            if self.obs.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"OBS did not open its websocket; see {self.workdir / 'obs.log'}")

    def stop_receiver(self) -> None:
        if self.receiver is not None:
            try:
                self.receiver.wait(15)  # it ends when OBS stops the stream
            except subprocess.TimeoutExpired:
                self.receiver.terminate()
                self.receiver.wait(10)

    def stop(self) -> None:
        for proc in (self.obs, self.receiver):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        self.x.stop()

    def __enter__(self) -> ObsStudio:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def captions_in(flv: Path) -> str:
    """The printable characters of the CEA-608 captions (field 1) in an FLV's H.264 SEI
    (ffmpeg 5.1's decoder skips them: "Late SEI is not implemented"), in stream order."""
    h264 = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", str(flv),
                           "-map", "0:v", "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f",
                           "h264", "-"], capture_output=True, check=True, timeout=60).stdout
    out = []
    for nal in h264.split(b"\x00\x00\x01")[1:]:
        if not nal or nal[0] & 0x1F != 6:  # SEI
            continue
        data = nal[1:].replace(b"\x00\x00\x03", b"\x00\x00")
        i = 0
        while i + 2 < len(data) and data[i] != 0x80:
            ptype = psize = 0
            while data[i] == 0xFF:
                ptype += 255
                i += 1
            ptype += data[i]
            i += 1
            while data[i] == 0xFF:
                psize += 255
                i += 1
            psize += data[i]
            i += 1
            payload = data[i:i + psize]
            i += psize
            # user_data_registered_itu_t_t35: country 0xB5, provider 0x0031, "GA94", type 3
            if ptype != 4 or payload[3:8] != b"GA94\x03":
                continue
            count = payload[8] & 0x1F
            for k in range(count):
                marker, b1, b2 = payload[10 + 3 * k:13 + 3 * k]
                if marker & 0x04 and marker & 0x03 == 0:  # valid, field 1 (608)
                    b1, b2 = b1 & 0x7F, b2 & 0x7F
                    if b1 >= 0x20:  # printable pair (control codes start 0x10-0x1f)
                        out.append(chr(b1) + (chr(b2) if b2 >= 0x20 else ""))
    return "".join(out)


def request(port: int, password: str, request_type: str, data: dict | None = None) -> dict:
    """One obs-websocket 5 request from the test (e.g. StartStream), as OBS's own remote
    controls send it; returns the response's ``d``."""
    from websockets.sync.client import connect

    from voxcap.share.obs import auth_string

    with connect(f"ws://127.0.0.1:{port}", open_timeout=10) as ws:
        hello = json.loads(ws.recv(10))
        ident = {"rpcVersion": 1, "eventSubscriptions": 0}
        auth = hello["d"].get("authentication")
        if auth:
            ident["authentication"] = auth_string(password, auth["salt"], auth["challenge"])
        ws.send(json.dumps({"op": 1, "d": ident}))
        assert json.loads(ws.recv(10))["op"] == 2
        ws.send(json.dumps({"op": 6, "d": {"requestType": request_type, "requestId": "t",
                                           "requestData": data or {}}}))
        while True:
            msg = json.loads(ws.recv(10))
            if msg["op"] == 7:
                return msg["d"]
