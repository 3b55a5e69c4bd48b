"""No API key voxcap sends (this computer's ``voxcap serve`` key, found; or one given with
remote-api-key, --api-key-file, --api-key-env) goes to another user's program on this computer:
not to a name that merely starts with "127." (it can point anywhere), and not to a program that
took the port first (e.g. while the ``ssh -L`` tunnel or ``voxcap serve`` is down). The check
reads the connected socket itself, before any header is sent: a listener that comes and goes
cannot slip in between a check and the connect. Real sockets on loopback; another user's
listener needs root (to become nobody)."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.other_user import needs_root, other_user

from voxcap.engine.remote import connection
from voxcap.engine.remote.settings import RemoteSettings, find_api_key, local_server_key_path, save_api_key

# Another user's program on a loopback port: it prints each request head it is sent.
LISTENER = r"""
import socket, sys
where = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
s = socket.socket(socket.AF_INET6 if ":" in where else socket.AF_INET)
if where == "::":
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # dual-stack: IPv4 too
s.bind((where, 0)); s.listen()
print(s.getsockname()[1], flush=True)
s.settimeout(4)  # then gone: nothing more came
while True:
    try:
        c, _ = s.accept()
    except TimeoutError:
        sys.exit(0)
    c.settimeout(2)
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            chunk = c.recv(4096)
            if not chunk:
                break
            head += chunk
    except OSError:
        pass
    print(head.decode("latin-1"), flush=True)
    c.close()
"""

# One that takes the port for a moment, lets it go, takes it again (every 3 ms), for ~4 s.
TOGGLER = r"""
import socket, sys, time
probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
print(port, flush=True)
end = time.monotonic() + 4
while time.monotonic() < end:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port)); s.listen()
    except OSError:
        s.close(); time.sleep(0.003); continue
    s.settimeout(0.003)
    try:
        c, _ = s.accept()
        c.settimeout(0.5)
        print(repr(c.recv(4096)), flush=True)
        c.close()
    except OSError:
        pass
    s.close()
    time.sleep(0.003)
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


@needs_root
def test_another_users_listener_is_sent_no_key_found_or_given(serve_key):
    with other_user(LISTENER) as spy:
        url = f"ws://127.0.0.1:{spy.port}/v1/realtime"
        for key in (serve_key, "vx-given-by-the-user"):
            with pytest.raises(connection.Retry) as refused:
                asyncio.run(connection.connect(url, key, 5))
            assert refused.value.message == (f"Not connecting to ws://127.0.0.1:{spy.port}/v1/realtime: "
                                             "another user's program (uid 65534) listens there; the "
                                             "API key is not sent to it.")
            assert "voxcap serve on another port" in refused.value.fix
        # the start-up probe of /v1/models too
        s = RemoteSettings(f"ws://127.0.0.1:{spy.port}", "", api_key="vx-given-by-the-user")
        with pytest.raises(connection.Retry, match="another user's program"):
            asyncio.run(connection.probe_models(s, s.server_url))
    assert "vx-" not in spy.output
    assert "Authorization" not in spy.output


@needs_root
def test_a_listener_that_comes_and_goes_never_gets_the_key(serve_key):
    """The owner check of a port, then a connect, raced: a listener toggling every 3 ms got the
    key in 64 of 400 tries. The connected socket is what is checked now."""
    tries = 0
    with other_user(TOGGLER) as spy:
        url = f"ws://127.0.0.1:{spy.port}/v1/realtime"
        end = time.monotonic() + 3.5
        while time.monotonic() < end and tries < 400:
            tries += 1
            try:
                asyncio.run(connection.connect(url, serve_key, 0.5))
            except (connection.Retry, connection.Fatal):
                pass
    assert tries > 20
    assert "vx-made-here" not in spy.output


@needs_root
@pytest.mark.parametrize(("bind", "host"), [("::", "127.0.0.1"), ("::", "[::1]"), ("::1", "[::1]"),
                                            ("0.0.0.0", "127.0.0.1")])
def test_another_users_listener_on_any_loopback_form_is_refused(bind, host):
    """IPv6, dual-stack (the other end is ::ffff:127.0.0.1 in /proc/net/tcp6) and wildcard
    listeners are found as well."""
    with other_user(LISTENER, bind) as spy:
        url = f"ws://{host}:{spy.port}/v1/realtime"
        with pytest.raises(connection.Retry, match="another user's program"):
            asyncio.run(connection.connect(url, "vx-given-by-the-user", 5))
    assert "vx-" not in spy.output
