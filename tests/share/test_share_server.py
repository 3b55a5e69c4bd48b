"""The caption server over plain HTTP: read-only, the Host check, the token, no CORS unless
allowed, transcripts, a busy port, stopping, and no caption text or token in the log."""

from __future__ import annotations

import dataclasses
import http.client
import json
import logging
import socket
import urllib.request

import pytest
from support.browser import wait_for

from voxcap.captions.export import render
from voxcap.share.guard import host_allowed
from voxcap.share.server import ShareError, ShareServer

pytestmark = pytest.mark.timeout(120)


def _get(server, path="/", method="GET", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read() if not path.startswith("/events") or r.status != 200 else b""
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


def test_read_only(make_server):
    server = make_server()
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        for path in ("/", "/events", "/captions.txt"):
            status, headers, _ = _get(server, path, method)
            assert (status, headers.get("allow")) == (405, "GET, HEAD"), (method, path)
    assert _get(server, "/", "HEAD")[0] == 200
    assert _get(server, "/nothing-here")[0] == 404


@pytest.mark.parametrize(("host", "ok"), [
    ("127.0.0.1:{port}", True), ("localhost:{port}", True), ("[::1]:{port}", True),
    ("LOCALHOST", True), ("evil.test", False), ("evil.test:{port}", False),
    ("127.0.0.1.evil.test:{port}", False), ("localhost.evil.test", False), ("", False),
    ("10.1.2.3:{port}", False),
])
def test_host_header(make_server, host, ok):
    server = make_server()
    status, _, body = _get(server, "/", headers={"Host": host.format(port=server.port)})
    assert (status == 200) == ok, (status, body)
    if not ok:
        assert status == 400 and b"wrong Host" in body


def test_lan_address_as_host():
    # with LAN sharing the Host may also be the address this connection came in on, nothing else
    assert host_allowed("192.168.1.5:8765", "192.168.1.5", lan=True)
    assert not host_allowed("192.168.1.5:8765", "192.168.1.5", lan=False)
    assert not host_allowed("192.168.1.6:8765", "192.168.1.5", lan=True)
    assert not host_allowed("myhost.local:8765", "192.168.1.5", lan=True)  # a name: never
    assert host_allowed("[fe80::1]:8765", "fe80::1%eth0", lan=True)


def test_the_token_guards_every_route(make_server, script):
    server = make_server(lan=True, bind="127.0.0.1")
    script(server.post).say(2)
    for path in ("/", "/events", "/captions.txt", "/captions.vtt"):
        status, _, body = _get(server, path)
        assert status == 403 and b"access token" in body, path
        assert _get(server, f"{path}?token=wrong")[0] == 403
        assert _get(server, f"{path}?token={server.token}")[0] == 200
    assert server.viewers == 0 or wait_for(lambda: server.viewers == 0, what="no viewers")
    other = make_server(lan=True, bind="127.0.0.1")
    assert other.token != server.token  # a new random token each time unless one is given
    assert make_server(lan=True, bind="127.0.0.1", token="kept-token").token == "kept-token"


def test_no_cross_origin_headers_unless_an_origin_is_allowed(make_server, script):
    server = make_server()
    script(server.post).say(2)
    _, headers, _ = _get(server, "/captions.txt", headers={"Origin": "http://evil.test"})
    assert not any(k.startswith("access-control-") for k in headers), headers
    assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "no-referrer"
    allowed = make_server(allow_origin="http://notes.example:3000")
    _, headers, _ = _get(allowed, "/captions.txt", headers={"Origin": "http://notes.example:3000"})
    assert headers["access-control-allow-origin"] == "http://notes.example:3000"
    _, headers, _ = _get(allowed, "/captions.txt", headers={"Origin": "http://evil.test"})
    assert "access-control-allow-origin" not in headers


def test_page_headers(make_server):
    status, headers, body = _get(make_server())
    assert status == 200 and b"<title>voxcap" in body and b'role="log"' in body
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp  # inline code pinned


def test_transcripts_are_the_session_so_far(make_server, script, journalled):
    hub, journal, s = journalled.hub, journalled.journal, journalled.script
    s.say(30, pause_every=10)
    server = make_server(session_source=journal.session)
    hub.subscribe(server.post)
    s.say(5)
    journal.close()
    session = journal.session()
    for fmt in ("txt", "vtt"):
        status, headers, body = _get(server, f"/captions.{fmt}")
        assert status == 200 and body.decode() == render(session, "." + fmt)[0]
        assert headers["content-type"].startswith("text/vtt" if fmt == "vtt" else "text/plain")
    assert body.decode().startswith("WEBVTT") and "w34" in body.decode()
    # without a journal: what the server saw itself
    bare = make_server()
    s2 = script(bare.post)
    s2.say(4)
    wait_for(lambda: _get(bare, "/captions.txt")[2] == b"w0 w1 w2 w3\n", what="the TXT")


def test_a_busy_port_is_one_clear_line():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(ShareError) as err:
            ShareServer(port=port).start()
    finally:
        taken.close()
    assert err.value.message == (f"Port {port} is in use (another program, or another voxcap "
                                 "sharing captions).")
    assert "--share PORT" in err.value.fix and "\n" not in err.value.message


def test_stop_disconnects_viewers_at_once_and_frees_the_port(make_server, script):
    server = make_server()
    script(server.post).say(2)
    feed = urllib.request.urlopen(server.local_url("/events"), timeout=30)
    assert feed.readline() == b"retry: 2000\n"
    assert feed.readline() == b"\n" and feed.readline().startswith(b'data: {"type":"snapshot"')
    assert server.viewers == 1
    server.stop()
    feed.read()  # ends (does not hang until the timeout): the server closed it
    assert server.viewers == 0
    again = ShareServer(port=server.port).start()  # the port is free again
    again.stop()


def test_no_caption_text_or_token_in_the_log(make_server, script, caplog):
    caplog.set_level(logging.DEBUG)
    server = make_server(lan=True, bind="127.0.0.1")
    s = script(server.post)
    s.delta(" confidentialword")
    s.delta("")
    with urllib.request.urlopen(server.local_url("/captions.txt"), timeout=30) as r:
        assert b"confidentialword" in r.read()
    feed = urllib.request.urlopen(server.local_url("/events"), timeout=30)
    wait_for(lambda: server.viewers == 1, what="the viewer")
    feed.close()
    _get(server, "/?token=nope")
    _get(server, "/", headers={"Host": "evil.test"})
    server.stop()
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "viewer from 127.0.0.1 connected" in text and "refused GET /" in text
    assert "confidentialword" not in text and server.token not in text and "nope" not in text


def _snapshot_words(server) -> list[str]:
    with urllib.request.urlopen(server.local_url("/events"), timeout=30) as feed:
        for raw in feed:
            if raw.startswith(b"data: "):
                snap = json.loads(raw[6:])
                return " ".join(ln["text"] for ln in snap["lines"]).split()
    return []


def test_a_journal_that_lags_is_read_again(make_server, journalled):
    hub, journal, s = journalled.hub, journalled.journal, journalled.script
    s.say(10)
    reads = []

    def source():  # the first read misses the last deltas (not written yet when read)
        session = journal.session()
        reads.append(len(session.records))
        return dataclasses.replace(session, records=session.records[:6]) if len(reads) == 1 \
            else session
    server = make_server(session_source=source)
    hub.subscribe(server.post)
    s.say(3)
    wait_for(lambda: _snapshot_words(server) == s.words, what="the words with the gap filled")
    assert len(reads) == 2


def test_proof_of_the_token_asks_for_none_and_gives_nothing_away(make_server, script):
    """/proof answers HMAC-SHA256(token, label + nonce) without a token (the page checks it
    before sending the token: test_share_page.py); nothing else opens without the token."""
    import hashlib
    import hmac

    server = make_server(lan=True, bind="127.0.0.1")
    script(server.post).say(2)
    nonce = "0123456789abcdef0123456789abcdef"
    status, _, body = _get(server, f"/proof?nonce={nonce}")
    expected = hmac.new(server.token.encode(), f"voxcap-share-proof:{nonce}".encode(),
                        hashlib.sha256).hexdigest()
    assert (status, body.decode()) == (200, expected)
    assert server.token.encode() not in body
    for bad in ("/proof", "/proof?nonce=short", "/proof?nonce=" + "x" * 32, "/proof?nonce=" + "a" * 65):
        assert _get(server, bad)[0] == 404, bad
    assert _get(server, "/captions.txt")[0] == 403
    assert _get(make_server(), f"/proof?nonce={nonce}")[0] == 404  # no token: nothing to prove
