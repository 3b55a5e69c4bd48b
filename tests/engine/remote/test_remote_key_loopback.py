"""This computer's ``voxcap serve`` key, which the app offers without being given it, goes only
to a server that is surely on this computer and run by this user: not to a name that merely
starts with "127." (it can point anywhere), and not to another user's program that took the
port first (e.g. while the app waits for ``voxcap serve``). A key that was given is sent as
before. Real sockets on loopback; another user's listener needs root (to become nobody)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from voxcap.engine.remote import connection
from voxcap.engine.remote.settings import find_api_key, local_server_key_path, save_api_key

# Another user's program on a loopback port: it records the request head it is sent.
LISTENER = r"""
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
s.settimeout(20)
try:
    c, _ = s.accept()
except TimeoutError:
    sys.exit(0)
c.settimeout(5)
head = b""
while b"\r\n\r\n" not in head:
    chunk = c.recv(4096)
    if not chunk:
        break
    head += chunk
print(head.decode("latin-1"), flush=True)
"""


@pytest.fixture
def serve_key(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path))
    save_api_key(local_server_key_path(), "vx-made-here")
    return "vx-made-here"


@pytest.mark.parametrize("url", ["ws://127.attacker.example:8000", "ws://127.0.0.1.nip.io:8000",
                                 "ws://localhost.attacker.example:8000", "ws://0x7f000001:8000"])
def test_names_that_look_local_get_no_key(serve_key, url):
    assert find_api_key(url)[0] is None


@pytest.mark.parametrize("url", ["ws://127.0.0.1:8000", "ws://127.1.2.3:8000", "ws://[::1]:8000",
                                 "ws://localhost:8000", "ws://[::ffff:127.0.0.1]:8000"])
def test_this_computers_addresses_find_it(serve_key, url):
    assert find_api_key(url)[0] == serve_key


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to listen as another user (nobody)")
def test_another_users_listener_is_not_sent_the_key(serve_key):
    other = subprocess.Popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(other.stdout.readline())
        url = f"ws://127.0.0.1:{port}/v1/realtime"
        with pytest.raises(connection.Retry) as refused:
            asyncio.run(connection.connect(url, serve_key, 5))
        assert refused.value.message.startswith("Another user's program listens at ")
        assert "voxcap serve on another port" in refused.value.fix
        # a key given for that server (e.g. an admin's service on this computer) still goes
        with pytest.raises((connection.Retry, connection.Fatal)):
            asyncio.run(connection.connect(url, "vx-given-for-it", 5))
        head = other.communicate(timeout=30)[0]
    finally:
        other.kill()
        other.wait()
    assert "vx-made-here" not in head
    assert "Authorization: Bearer vx-given-for-it" in head

