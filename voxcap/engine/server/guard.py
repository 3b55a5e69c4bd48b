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
"""

from __future__ import annotations

import hashlib
import os
import secrets

OPEN_PATHS = frozenset({"/health"})  # GET/HEAD without the key
KEY_ENV = "VLLM_API_KEY"
MIDDLEWARE = f"{__name__}.KeyOnEveryPath"  # the value of vLLM's --middleware
UNAUTHORIZED = b'{"error":"Unauthorized"}'


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class KeyOnEveryPath:
    def __init__(self, app) -> None:
        self.app = app
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
