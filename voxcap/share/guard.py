"""What the share server lets in: an ASGI middleware in front of every route.

- Read-only: GET and HEAD only (anything else: 405), no WebSocket or other upgrade (400).
- The Host header must name this computer as the browser reached it: ``localhost``,
  ``127.0.0.1`` or ``[::1]`` (any port), or, with LAN sharing, the very address the
  connection came in on. A page on another site whose name was made to point here (DNS
  rebinding) sends its own name and is refused (400).
- With a token (LAN sharing, or asked for on this computer too) every request must carry it
  as ``?token=`` (403 otherwise); compared as bytes in constant time, so any bytes a client
  sends (non-ASCII, overlong, repeated) are a plain 403, never an error.
- A request that says it comes from a web page (``Origin``) is served only to the page itself
  (same origin) or to the one allowed site; any other origin, ``null`` included (sandboxed
  frames, local files), is refused (403) before any work, so other sites' pages can neither
  read the captions nor take viewer slots.
- Every response says ``no-store``, ``nosniff`` and ``no-referrer`` (the token is in the URL).
  Cross-origin reads: no CORS headers at all unless an origin is allowed (``CORSMiddleware``
  in ``server``).

Refusals are logged through the server's ``TrafficLog``: at most a few lines a minute however
many requests come, each path shortened and escaped, never the token.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import threading
import time
from urllib.parse import unquote_to_bytes

log = logging.getLogger(__name__)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = ("GET", "HEAD")
HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer")]
MAX_TOKEN_BYTES = 512  # longer: wrong without comparing


class TrafficLog(logging.LoggerAdapter):
    """A logger for lines that requests cause (refusals, viewers coming and going, bad
    requests): at most ``per_window`` lines every ``window_s``; the first line after a window
    that left some out says how many. One per server, so one flood does not silence another
    server's log. uvicorn reads ``level`` of the logger it is given."""

    level = logging.DEBUG

    def __init__(self, logger: logging.Logger, per_window: int = 30, window_s: float = 60.0,
                 clock=time.monotonic) -> None:
        super().__init__(logger, {})
        self.per_window, self.window_s, self.clock = per_window, window_s, clock
        self._lock = threading.Lock()
        self._start = clock()
        self._count = 0
        self.left_out = 0  # in the current window
        self.left_out_total = 0

    def log(self, level, msg, *args, **kwargs) -> None:
        if not self.isEnabledFor(level):
            return
        with self._lock:
            now = self.clock()
            left_out = 0
            if now - self._start >= self.window_s:
                left_out, self.left_out = self.left_out, 0
                self._start, self._count = now, 0
            if self._count >= self.per_window:
                self.left_out += 1
                self.left_out_total += 1
                return
            self._count += 1
        if left_out:
            self.logger.log(logging.INFO, "share: %d more lines like these were left out "
                            "(at most %d a minute)", left_out, self.per_window)
        self.logger.log(level, msg, *args, **kwargs)


def shown(text: str, limit: int = 60) -> str:
    """``text`` safe for one log line: control characters escaped, at most ``limit`` shown."""
    cut = text[:limit]
    out = cut.encode("unicode_escape").decode("ascii") if not cut.isprintable() else cut
    return out + (f"…({len(text) - limit} more)" if len(text) > limit else "")


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


def token_of(query_string: bytes) -> bytes | None:
    """The first ``token`` parameter's value, percent-decoded to bytes (None: none given)."""
    for part in query_string.split(b"&"):
        name, _, value = part.partition(b"=")
        if unquote_to_bytes(name.replace(b"+", b" ")) == b"token":
            return unquote_to_bytes(value.replace(b"+", b" "))
    return None


def token_matches(given: bytes | None, token: bytes) -> bool:
    if given is None or len(given) > MAX_TOKEN_BYTES:
        return False
    return secrets.compare_digest(given, token)


def origin_allowed(origin: str, host: str, allow_origin: str) -> bool:
    """A request's ``Origin`` (a web page's): the page itself (this server, as its Host says)
    or the one allowed site."""
    origin = origin.strip().lower()
    return origin == f"http://{host.strip().lower()}" or bool(allow_origin) and \
        origin == allow_origin.lower()


class Guard:
    def __init__(self, app, *, token: str = "", lan: bool = False, allow_origin: str = "",
                 traffic: TrafficLog | None = None) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.lan = lan
        self.allow_origin = allow_origin
        self.traffic = traffic or TrafficLog(log)
        self.refused = 0  # requests turned away (counted for tests and the log)

    def _problem(self, scope, headers: list[tuple[bytes, bytes]]):
        named: dict[bytes, list[bytes]] = {}
        for k, v in headers:
            named.setdefault(k.lower(), []).append(v)
        hosts = named.get(b"host", [])
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else ""
        local = (scope.get("server") or (None, None))[0]
        if scope["method"] not in SAFE_METHODS:
            return 405, "read-only: only GET is served", [(b"allow", b"GET, HEAD")]
        if b"upgrade" in named:
            return 400, ("no WebSocket here: the caption feed is /events (Server-Sent "
                         "Events)"), []
        if not host_allowed(host, local, self.lan):
            return 400, ("wrong Host: open the address voxcap shows (127.0.0.1 or its network "
                         "address)"), []
        if self.token and not token_matches(token_of(scope.get("query_string", b"")),
                                            self.token):
            return 403, ("this address needs its access token: open the full address (or QR "
                         "code) voxcap shows"), []
        origins = named.get(b"origin", [])
        if origins and (len(origins) > 1 or not origin_allowed(
                origins[0].decode("latin-1"), host, self.allow_origin)):
            return 403, ("pages of other web sites may not read the captions (Settings → "
                         "Share captions: Allow site)"), []
        return None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # WebSocket: not served
            await send({"type": "websocket.close", "code": 1008})
            return
        problem = self._problem(scope, list(scope.get("headers") or []))
        if problem is not None:
            self.refused += 1
            status, text, extra = problem
            peer = (scope.get("client") or ("?", 0))[0]
            self.traffic.info("share: refused %s %s from %s (%d)", shown(scope["method"], 10),
                              shown(scope.get("path", "")), peer, status)
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
