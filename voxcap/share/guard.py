"""What the share server lets in: an ASGI middleware in front of every route.

- Read-only: GET and HEAD only (anything else: 405), no WebSocket or other upgrade (400).
- The Host header must name this computer as the browser reached it: ``localhost``,
  ``127.0.0.1`` or ``[::1]`` (any port), or, with LAN sharing, the very address the
  connection came in on. A page on another site whose name was made to point here (DNS
  rebinding) sends its own name and is refused (400). Parsed strictly: a name or address,
  then nothing or ``:`` and digits (``[::1]evil.test``, ``localhost:evil``: 400).
- With a token (LAN sharing, or asked for on this computer too) every request must carry it
  as ``?token=`` (403 otherwise); compared as bytes in constant time, so any bytes a client
  sends (non-ASCII, overlong, repeated) are a plain 403, never an error. One path asks for
  none: ``/proof``, where the server proves to its page that it knows the token before the
  page sends it (``server``), so a program that took the port meanwhile never gets it.
- A request that says it comes from a web page (``Origin``) is served only to the page itself
  (same origin) or to the one allowed site; any other origin, ``null`` included (sandboxed
  frames, local files), is refused (403) before any work, so other sites' pages can neither
  read the captions nor take viewer slots.
- Browsers send no ``Origin`` on another site's ``<img>``, ``<iframe>`` or no-cors
  ``fetch``, but they do say where a request comes from (Fetch Metadata,
  ``Sec-Fetch-Site``): anything but ``same-origin`` or ``none`` (typed, a bookmark, OBS, a
  program) is refused (403) unless it is a CORS request of the allowed site (its ``Origin``)
  or a person following a link to the page itself (a top-level navigation to ``/``). Browsers
  without Fetch Metadata (Firefox before 90, Safari before 16.4) still get the headers below.
- Every response says ``no-store``, ``nosniff`` and ``no-referrer`` (the token is in the URL),
  and that no other site may frame it (``frame-ancestors 'none'``, ``X-Frame-Options``) or
  embed it without CORS (``Cross-Origin-Resource-Policy: same-origin``), and a page of another
  site that opens it gets no handle on its window (``Cross-Origin-Opener-Policy``). The allowed site
  reads the feed and the exports through CORS; it cannot frame the page either (a framing
  request carries no ``Origin`` to tell it from any other site's).
  Cross-origin reads: no CORS headers at all unless an origin is allowed (``CORSMiddleware``
  in ``server``).

Refusals are logged through the server's ``TrafficLog``: at most a few lines a minute however
many requests come, each path shortened and escaped, never the token.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import threading
import time
from urllib.parse import unquote_to_bytes

log = logging.getLogger(__name__)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = ("GET", "HEAD")
NOT_FRAMED = b"frame-ancestors 'none'"
HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-resource-policy", b"same-origin"),
           (b"cross-origin-opener-policy", b"same-origin")]
OWN_SITE = (b"same-origin", b"none")  # Sec-Fetch-Site of the page itself, or no page at all
# Host: [IPv6] or a name/IPv4 (no colon), then nothing or ":" and ASCII digits
_HOST = re.compile(r"(?:\[(?P<ip6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]@/\s]+))(?::[0-9]{1,5})?",
                   re.ASCII)
PROOF_PATH = "/proof"  # the server's proof that it knows the token: asks for none
MAX_TOKEN_BYTES = 512  # longer: wrong without comparing
OTHER_SITES = ("pages of other web sites may not use the captions (Settings → Share captions: "
               "Allow site lets one site read them)")


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
    """``"[::1]:8765"`` -> ``"::1"``, ``"Example.org:80"`` -> ``"example.org"``; "" for
    anything else (``[::1]evil.test``, ``localhost:evil``, ``::1`` without brackets)."""
    m = _HOST.fullmatch(host.strip().lower())
    if m is None:
        return ""
    return m["ip6"] or m["name"]


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


def with_headers(headers) -> list:
    """``headers`` and every response's own; ``frame-ancestors`` as a policy of its own where
    the response has no Content-Security-Policy (the page's includes it)."""
    out = [*headers, *HEADERS]
    if not any(k.lower() == b"content-security-policy" for k, _v in headers):
        out.append((b"content-security-policy", NOT_FRAMED))
    return out


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
        if self.token and scope.get("path") != PROOF_PATH and \
                not token_matches(token_of(scope.get("query_string", b"")), self.token):
            return 403, ("this address needs its access token: open the full address (or QR "
                         "code) voxcap shows"), []
        origins = named.get(b"origin", [])
        if origins and (len(origins) > 1 or not origin_allowed(
                origins[0].decode("latin-1"), host, self.allow_origin)):
            return 403, OTHER_SITES, []
        if not self._from_own_page(scope, named, origins):
            return 403, OTHER_SITES, []
        return None

    def _from_own_page(self, scope, named: dict[bytes, list[bytes]], origins: list[bytes]) -> bool:
        """Fetch Metadata: the page itself, no page, the allowed site's CORS request, or a
        person following another site's link to the page (checked after ``Origin``)."""
        sites = named.get(b"sec-fetch-site", [])
        if not sites:
            return True  # not a browser, or one without Fetch Metadata
        if len(sites) > 1:
            return False
        if sites[0].strip().lower() in OWN_SITE:
            return True
        mode = b"".join(named.get(b"sec-fetch-mode", [])).strip().lower()
        dest = b"".join(named.get(b"sec-fetch-dest", [])).strip().lower()
        if mode == b"cors" and self.allow_origin and len(origins) == 1 and \
                origins[0].decode("latin-1").strip().lower() == self.allow_origin.lower():
            return True  # the allowed site reading through CORS
        return mode == b"navigate" and dest == b"document" and scope.get("path") == "/"

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
                                    *with_headers(extra)]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": with_headers(message.get("headers", []))}
            await send(message)
        await self.app(scope, receive, send_with_headers)
