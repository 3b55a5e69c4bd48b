"""What the share server lets in: an ASGI middleware in front of every route.

- Read-only: GET and HEAD only (anything else: 405), no WebSocket.
- The Host header must name this computer as the browser reached it: ``localhost``,
  ``127.0.0.1`` or ``[::1]`` (any port), or, with LAN sharing, the very address the
  connection came in on. A page on another site whose name was made to point here (DNS
  rebinding) sends its own name and is refused (400).
- With a token (LAN sharing) every request must carry it as ``?token=`` (403 otherwise);
  compared in constant time.
- Every response says ``no-store``, ``nosniff`` and ``no-referrer`` (the token is in the URL).
  Cross-origin reads: no CORS headers at all unless an origin is allowed (``CORSMiddleware``
  in ``server``).
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
from urllib.parse import parse_qs

log = logging.getLogger(__name__)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = ("GET", "HEAD")
HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer")]


def host_name(host: str) -> str:
    """``"[::1]:8765"`` -> ``"::1"``, ``"Example.org:80"`` -> ``"example.org"``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host: str, local_addr: str | None, lan: bool) -> bool:
    name = host_name(host)
    if name in LOOPBACK_NAMES:
        return True
    if not lan or not local_addr or not name:
        return False
    try:
        return ipaddress.ip_address(name) == ipaddress.ip_address(local_addr.split("%")[0])
    except ValueError:
        return False  # a name other than localhost: never (it could point anywhere)


def token_of(query_string: bytes) -> str:
    values = parse_qs(query_string.decode("latin-1")).get("token", [])
    return values[0] if values else ""


class Guard:
    def __init__(self, app, *, token: str = "", lan: bool = False) -> None:
        self.app = app
        self.token = token
        self.lan = lan
        self.refused = 0  # requests turned away (counted for tests and the log)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # WebSocket: not served
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        local = (scope.get("server") or (None, None))[0]
        problem = None
        if scope["method"] not in SAFE_METHODS:
            problem = (405, "read-only: only GET is served", [(b"allow", b"GET, HEAD")])
        elif not host_allowed(host, local, self.lan):
            problem = (400, "wrong Host: open the address voxcap shows (127.0.0.1 or its "
                            "network address)", [])
        elif self.token and not secrets.compare_digest(token_of(scope.get("query_string", b"")),
                                                       self.token):
            problem = (403, "this address needs its access token: open the full address (or "
                            "QR code) voxcap shows", [])
        if problem is not None:
            self.refused += 1
            status, text, extra = problem
            log.info("share: refused %s %s (%d)", scope["method"], scope.get("path", ""), status)
            body = (text + "\n").encode()
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode()),
                                    *HEADERS, *extra]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)
        await self.app(scope, receive, send_with_headers)
