"""The API key on every path of ``voxcap serve``'s server, not only ``/v1``.

vLLM's own check (``--api-key``/``VLLM_API_KEY``) covers paths under ``/v1`` (and ``/v2``,
``/inference``, ``/cohere``) and lets OPTIONS through; everything else answered anyone who could
connect: ``/metrics`` (request counts, timings, the model's name), ``/tokenize`` and
``/detokenize``, ``/version``, ``/load``, ``/ping``, ``/invocations``, the API docs. vLLM's
``--middleware`` option adds this ASGI middleware in front of all of them (outermost): a
request or WebSocket without ``Authorization: Bearer <the key>`` gets 401, except ``GET /health``
(an empty 200 while the server is up: what a health check needs, nothing more). ``voxcap
serve`` also passes ``--disable-fastapi-docs`` (no /docs, /redoc, /openapi.json).

The key is VLLM_API_KEY from the environment, as vLLM reads it (``voxcap serve`` sets it);
without one, nothing is checked here either. Compared as bytes in constant time. Imports
nothing of vLLM or voxcap's engine: vLLM's server process imports it by name.

A connection that sends nothing never reaches a middleware, and uvicorn gives it no timeout (its
keep-alive timer starts after a response): 300 idle sockets from another user stayed open for
good, bounded only by the open-file limit. Built in vLLM's server (at its start, before it
serves), the guard therefore has uvicorn close a connection that has not sent a whole request
head within ``HEAD_DEADLINE_S`` (``drop_silent_connections``); after a response uvicorn's own
keep-alive timeout (vLLM's 5 s) applies.
"""

from __future__ import annotations

import hashlib
import os
import secrets

OPEN_PATHS = frozenset({"/health"})  # GET/HEAD without the key
KEY_ENV = "VLLM_API_KEY"
MIDDLEWARE = f"{__name__}.KeyOnEveryPath"  # the value of vLLM's --middleware
UNAUTHORIZED = b'{"error":"Unauthorized"}'
HEAD_DEADLINE_S = 10.0  # as the caption server's (share/connections.py)
_UVICORN_PROTOCOLS = (("uvicorn.protocols.http.h11_impl", "H11Protocol"),
                      ("uvicorn.protocols.http.httptools_impl", "HttpToolsProtocol"))


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def _close_if_silent(protocol, transport) -> None:
    """No request head yet (uvicorn makes a cycle for each one; an upgraded websocket has a
    protocol of its own): closed."""
    if protocol.cycle is None and transport.get_protocol() is protocol and \
            not transport.is_closing():
        transport.close()


def drop_silent_connections(deadline_s: float = HEAD_DEADLINE_S) -> None:
    """uvicorn's HTTP protocols close a new connection that has sent no whole request head
    within ``deadline_s``. Only uvicorn's own classes: a subclass keeping its own deadline (the
    caption server's) is left as it is. Once per process."""
    import importlib

    for module, name in _UVICORN_PROTOCOLS:
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):  # httptools is optional
            continue
        if "_voxcap_head_deadline" in vars(cls):
            continue
        original = cls.connection_made

        def connection_made(self, transport, _original=original, _cls=cls) -> None:
            _original(self, transport)
            if type(self) is _cls:
                self.loop.call_later(deadline_s, _close_if_silent, self, transport)

        cls.connection_made = connection_made
        cls._voxcap_head_deadline = deadline_s


class KeyOnEveryPath:
    def __init__(self, app) -> None:
        self.app = app
        drop_silent_connections()  # built in vLLM's server as it starts (its lifespan)
        key = os.environ.get(KEY_ENV, "").strip()
        self.key = _digest(key.encode("utf-8")) if key else None

    def allowed(self, scope) -> bool:
        if self.key is None:
            return True
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and \
                scope.get("path") in OPEN_PATHS:
            return True
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = value
                break
        scheme, _, token = given.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        return secrets.compare_digest(_digest(token.strip()), self.key)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket") or self.allowed(scope):
            await self.app(scope, receive, send)
            return
        prefix = ""
        if scope["type"] == "websocket":
            if "websocket.http.response" not in (scope.get("extensions") or {}):
                await send({"type": "websocket.close", "code": 1008})  # HTTP 403 to the client
                return
            # refused before it opens, with an HTTP answer (ASGI's websocket.http.response
            # extension, which uvicorn has): the client sees 401 as on any other path
            prefix = "websocket."
        await send({"type": f"{prefix}http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(UNAUTHORIZED)).encode()),
                                (b"www-authenticate", b"Bearer")]})
        await send({"type": f"{prefix}http.response.body", "body": UNAUTHORIZED})
