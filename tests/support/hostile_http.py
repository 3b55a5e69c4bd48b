"""Hostile HTTP against a caption server on loopback, and the well-behaved viewer that must still
be served after each attack (the page within PAGE_WITHIN_S, the feed's snapshot).

    target = Target(port, token)             # token "" when the address needs none
    reply = exchange(port, raw_bytes)        # one raw request: status, headers, body, closed
    serves_well(target)                      # asserts the page (<1 s) and a snapshot; seconds
    for case in CASES: case.run(target)      # each asserts what must come back

Cases are plain functions of a ``Target`` so that every listener (``ShareServer``, the app's
``Sharing`` on the session controller, the ``voxcap live --share`` process) meets the same
ones. Only loopback is used.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import struct
import time
from dataclasses import dataclass, field

# A viewer locked out by an attack waits for the attackers' 10 s request deadline (or for ever);
# a served one gets the page in ~10-100 ms. The bound sits between the two with room for this
# 2-core machine's load: 1.0 s was passed twice in full runs (1.39 s during the reconnect storm
# while the other worker ran vLLM), never with the page actually held up.
PAGE_WITHIN_S = 3.0


@dataclass
class Target:
    port: int
    token: str = ""

    def path(self, path: str = "/") -> str:
        if not self.token:
            return path
        return path + ("&" if "?" in path else "?") + f"token={self.token}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Reply:
    status: int | None  # None: no HTTP answer (closed, or silent until the timeout)
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    closed: bool = False  # the server closed the connection after answering
    seconds: float = 0.0


def _parse_head(raw: bytes) -> tuple[int, dict]:
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def exchange(port: int, data: bytes, timeout: float = 5.0, source: str | None = None) -> Reply:
    """Send ``data`` on a new connection and read one answer (to its end, or EOF)."""
    t0 = time.monotonic()
    s = socket.socket()
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    buf = b""
    closed = False
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(data)
        need = None
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            buf += chunk
            if need is None and b"\r\n\r\n" in buf:
                _, headers = _parse_head(buf)
                if "content-length" in headers:
                    need = buf.index(b"\r\n\r\n") + 4 + int(headers["content-length"])
            if need is not None and len(buf) >= need:
                s.settimeout(0.3)  # does the server close after it? (it says connection: close)
                with contextlib.suppress(OSError):
                    closed = s.recv(1) == b""
                break
    finally:
        s.close()
    if b"\r\n\r\n" not in buf:
        return Reply(None, closed=closed, seconds=time.monotonic() - t0)
    status, headers = _parse_head(buf)
    return Reply(status, headers, buf.split(b"\r\n\r\n", 1)[1], closed, time.monotonic() - t0)


def request(target: Target, path: str, method: str = "GET", headers: dict | None = None,
            host: str | None = None, extra: bytes = b"") -> Reply:
    """A request as raw bytes (so that any header, any path, goes out as given)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host if host is not None else target.host}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    lines.append("Connection: close")
    return exchange(target.port, "\r\n".join(lines).encode("latin-1") + b"\r\n" + extra
                    + b"\r\n")


def raw_request(target: Target, first_line: bytes, headers: bytes = b"") -> Reply:
    return exchange(target.port, first_line + b"\r\nHost: " + target.host.encode() + b"\r\n"
                    + headers + b"Connection: close\r\n\r\n")


# --------------------------------------------------------------- a well-behaved viewer ----
def page_seconds(target: Target) -> float:
    """Load the page as a browser would; its time (asserted 200, the page)."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", target.port, timeout=10)
    try:
        c.request("GET", target.path("/"))
        r = c.getresponse()
        body = r.read()
    finally:
        c.close()
    took = time.monotonic() - t0
    assert r.status == 200 and b"<title>voxcap" in body, (r.status, body[:200])
    return took


def snapshot(target: Target, timeout: float = 10.0) -> dict:
    """Open the feed and read its first message (a snapshot), then leave."""
    c = http.client.HTTPConnection("127.0.0.1", target.port, timeout=timeout)
    try:
        c.request("GET", target.path("/events"))
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read()[:200])
        while True:
            line = r.fp.readline()
            assert line, "the feed ended before its snapshot"
            if line.startswith(b"data: "):
                msg = json.loads(line[6:])
                assert msg["type"] == "snapshot", msg
                return msg
    finally:
        c.close()


def serves_well(target: Target) -> float:
    """The page within PAGE_WITHIN_S and the feed's snapshot; the page's seconds."""
    took = page_seconds(target)
    assert took < PAGE_WITHIN_S, f"the page took {took:.2f} s"
    snapshot(target)
    return took


def abort(sock: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0): a client that vanishes mid-stream, seen by the server
    at once (a reconnect storm's leaving viewers)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


# ------------------------------------------------------------------------------ cases ----
def _refused(reply: Reply, status: int, words: str = "") -> None:
    assert reply.status == status, (reply.status, reply.body[:200])
    if words:
        assert words.encode() in reply.body, reply.body[:200]
    assert not any(k.startswith("access-control-") for k in reply.headers), reply.headers


def _token_case(target: Target, query: str) -> Reply:
    """A request whose token is ``query``: 403 where a token is needed; served (200) where
    none is (the query is then just ignored). Never a 500."""
    reply = request(target, "/captions.txt?" + query)
    if target.token:
        _refused(reply, 403, "access token")
    else:
        assert reply.status == 200, reply.status
    return reply


def foreign_host(t):
    _refused(request(t, t.path("/"), host="evil.test"), 400, "wrong Host")


def rebinding_host(t):
    _refused(request(t, t.path("/events"), host=f"rebind.test:{t.port}"), 400, "wrong Host")


def no_host(t):
    _refused(exchange(t.port, f"GET {t.path('/')} HTTP/1.0\r\n\r\n".encode()), 400)


def two_hosts(t):
    reply = request(t, t.path("/"), headers={"Host": "evil.test"})
    assert reply.status == 400, reply.status


def foreign_origin(t):
    _refused(request(t, t.path("/events"), headers={"Origin": "http://evil.test"}), 403,
             "other web sites")


def null_origin(t):
    _refused(request(t, t.path("/captions.txt"), headers={"Origin": "null"}), 403,
             "other web sites")


def look_alike_origin(t):
    _refused(request(t, t.path("/"), headers={"Origin": f"http://127.0.0.1.evil.test:{t.port}"}),
             403)


def same_origin_is_served(t):
    reply = request(t, t.path("/captions.txt"), headers={"Origin": f"http://{t.host}"})
    assert reply.status == 200, reply.status


def no_token(t):
    _token_case(t, "")


def wrong_token(t):
    _token_case(t, "token=wrong")


def non_ascii_token(t):
    _token_case(t, "token=%C3%A9")


def non_ascii_token_raw(t):
    reply = raw_request(t, b"GET /captions.txt?token=\xc3\xa9 HTTP/1.1")
    assert reply.status in (400, 403), reply.status  # h11 refuses the raw bytes (400)


def surrogate_token(t):
    _token_case(t, "token=%ED%A0%80")


def nul_token(t):
    _token_case(t, "token=%00" + (t.token or ""))


def overlong_token(t):
    _token_case(t, "token=" + "a" * 2000)


def token_prefix(t):
    _token_case(t, "token=" + (t.token[:-1] if t.token else "x"))


def token_second(t):
    _token_case(t, "token=wrong&token=" + (t.token or "x"))


def non_get_methods(t):
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"):
        for path in ("/", "/events", "/captions.txt"):
            reply = request(t, t.path(path), method=method,
                            headers={"Content-Length": "5"}, extra=b"")
            _refused(reply, 405)
            assert reply.headers.get("allow") == "GET, HEAD"


def connect_method(t):
    reply = exchange(t.port, f"CONNECT evil.test:443 HTTP/1.1\r\nHost: {t.host}\r\n\r\n".encode())
    assert reply.status in (400, 405), reply.status


def websocket_upgrade(t):
    reply = request(t, t.path("/events"), headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": f"http://{t.host}"})
    _refused(reply, 400, "no WebSocket")


def h2c_upgrade(t):
    _refused(request(t, t.path("/"), headers={"Connection": "Upgrade, HTTP2-Settings",
                                               "Upgrade": "h2c", "HTTP2-Settings": "AAMAAABkAAQAAP__"}),
             400)


def huge_header(t):
    reply = request(t, t.path("/"), headers={"X-Junk": "a" * 100_000})
    assert reply.status == 431 and reply.closed, (reply.status, reply.closed)


def huge_path(t):
    reply = request(t, t.path("/" + "a" * 100_000))
    assert reply.status == 431 and reply.closed, (reply.status, reply.closed)


def big_but_fair_header(t):
    reply = request(t, t.path("/"), headers={"Cookie": "c=" + "b" * 6000})  # under 8 KiB
    assert reply.status == 200, reply.status


def many_headers(t):
    reply = request(t, t.path("/"), headers={f"X-{i}": "1" for i in range(400)})
    assert reply.status in (200, 431), reply.status


def garbage(t):
    reply = exchange(t.port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(200))
    assert reply.status in (None, 400), reply.status


def absolute_uri(t):
    reply = request(t, "http://evil.test" + t.path("/"), host="evil.test")
    assert reply.status == 400, reply.status


def traversal(t):
    for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
                 "/static/../../etc/passwd"):
        reply = request(t, t.path(path))
        assert reply.status == 404 and b"root:" not in reply.body, (path, reply.status)


def header_injection(t):
    reply = request(t, t.path("/%0d%0aSet-Cookie:%20x=1"))
    assert reply.status == 404 and "set-cookie" not in reply.headers, reply.headers


def body_on_get(t):
    reply = request(t, t.path("/captions.txt"), headers={"Content-Length": "3"}, extra=b"")
    assert reply.status in (200, 400), reply.status


def request_smuggling(t):
    reply = exchange(t.port, (f"GET {t.path('/')} HTTP/1.1\r\nHost: {t.host}\r\n"
                              "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "0\r\n\r\n").encode())
    assert reply.status in (400, 200), reply.status


def malformed_hosts(t):
    """Host must be a name or address, then at most ``:`` and digits; nothing after ``]``."""
    for host in ("[::1]evil.test", "localhost:evil", "localhost:", f"localhost:{t.port}x",
                 f"127.0.0.1:+{t.port}", f"127.0.0.1:{t.port}:1", "[::1]:80:80", "[::1",
                 "localhost:\u00b9", "::1", f"127.0.0.1:{t.port}/x", "localhost@evil.test"):
        _refused(request(t, t.path("/"), host=host), 400, "wrong Host")



def other_sites_subresources(t):
    """What a browser sends for another site's ``<img>``, ``<iframe>`` and no-cors fetch (no
    Origin on any): refused before a viewer slot or a transcript."""
    for site in ("cross-site", "same-site"):
        for path, mode, dest in (("/events", "no-cors", "image"), ("/captions.vtt", "no-cors",
                                 "empty"), ("/captions.txt", "no-cors", "script"),
                                 ("/", "navigate", "iframe"), ("/", "navigate", "frame"),
                                 ("/", "navigate", "object"), ("/events", "navigate",
                                 "document"), ("/events", "cors", "empty")):
            reply = request(t, t.path(path), headers={
                "Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest})
            _refused(reply, 403, "other web sites")


def other_sites_link_is_served(t):
    """A person following a link on another site to the caption page: a top-level navigation."""
    reply = request(t, t.path("/"), headers={"Sec-Fetch-Site": "cross-site",
                                             "Sec-Fetch-Mode": "navigate",
                                             "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"})
    assert reply.status == 200, reply.status


def own_page_is_served(t):
    for site, path in (("same-origin", "/captions.txt"), ("none", "/"), ("same-origin", "/")):
        reply = request(t, t.path(path), headers={"Sec-Fetch-Site": site,
                                                  "Sec-Fetch-Mode": "cors"})
        assert reply.status == 200, (site, path, reply.status)


def never_framed(t):
    """Every answer says it may not be framed or embedded by another site, nor keep a handle on
    a window another site opened (Cross-Origin-Opener-Policy)."""
    for path in ("/", "/captions.txt", "/nothing"):
        h = request(t, t.path(path)).headers
        assert h.get("x-frame-options") == "DENY", (path, h)
        assert "frame-ancestors 'none'" in h.get("content-security-policy", ""), (path, h)
        assert h.get("cross-origin-resource-policy") == "same-origin", (path, h)
        assert h.get("cross-origin-opener-policy") == "same-origin", (path, h)


CASES = [foreign_host, rebinding_host, no_host, two_hosts, foreign_origin, null_origin,
         look_alike_origin, same_origin_is_served, no_token, wrong_token, non_ascii_token,
         non_ascii_token_raw, surrogate_token, nul_token, overlong_token, token_prefix,
         token_second, non_get_methods, connect_method, websocket_upgrade, h2c_upgrade,
         huge_header, huge_path, big_but_fair_header, many_headers, garbage, absolute_uri,
         traversal, header_injection, body_on_get, request_smuggling, malformed_hosts,
         other_sites_subresources, other_sites_link_is_served, own_page_is_served, never_framed]
