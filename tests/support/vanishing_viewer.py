"""A viewer whose network vanishes, for tests/share/test_share_hostile.py; run inside a network
namespace of its own (``unshare -rn python vanishing_viewer.py USER_TIMEOUT_S``), where taking the
loopback link down touches nothing else: a caption server with that user timeout, captions
every 0.1 s, one viewer connected; then ``lo`` goes down (the viewer's machine is gone: no
acknowledgement, no reset), and it prints how long until the server let the viewer go; then
``lo`` comes back and the page is served again."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.request

from voxcap.events import CaptioningState, StreamOpened, TextDelta
from voxcap.share.connections import ConnectionLimits
from voxcap.share.server import ShareServer


def main() -> None:
    user_timeout = float(sys.argv[1])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    server = ShareServer(port=0, limits=ConnectionLimits(user_timeout_s=user_timeout)).start()
    post = server.post
    post(CaptioningState("starting", "vanish", ("Them",)))
    post(StreamOpened("s1", "Them", "test"))
    post(CaptioningState("on", "vanish", ("Them",)))
    stop = threading.Event()

    def talk() -> None:
        i = 0
        while not stop.is_set():
            post(TextDelta("s1", f" w{i}", (), i, i * 0.08, (i + 1) * 0.08, time.time()))
            i += 1
            stop.wait(0.1)
    threading.Thread(target=talk, daemon=True).start()
    viewer = socket.create_connection(("127.0.0.1", server.port))
    viewer.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    viewer.recv(4096)
    deadline = time.monotonic() + 10
    while server.viewers != 1:
        assert time.monotonic() < deadline, "the viewer did not connect"
        time.sleep(0.05)
    subprocess.run(["ip", "link", "set", "lo", "down"], check=True)
    t0 = time.monotonic()
    while server.viewers and time.monotonic() - t0 < 40:
        time.sleep(0.05)
    gone = time.monotonic() - t0
    print(f"viewer gone after {gone:.1f} s" if not server.viewers else
          f"viewer still there after {gone:.1f} s", flush=True)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=10) as r:
        if r.status == 200:
            print("page served again", flush=True)
    stop.set()
    viewer.close()
    server.stop()


if __name__ == "__main__":
    main()
