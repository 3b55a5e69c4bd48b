"""The connection to a vLLM server's realtime websocket: connecting, a session's opening
handshake, the start-up probes, and every failure explained for a person.

Failures are ``Fatal`` (the address, key or model is wrong: trying again will not help) or
``Retry`` (the server cannot be reached now: worth trying later). The API key is sent as a
bearer token only; it is never put into a message, an exception or a log record (websockets
logs request headers at DEBUG: its logger here redacts them).

The remote engine (``engine.py``) and the capacity benchmark (``benchmarks/capacity.py``) both
talk to the server through this module and ``protocol.py``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import random
import socket
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from ... import __version__, listeners, logs
from ...errors import ConfigError
from ...setting_refs import ref
from . import protocol
from .settings import (
    RemoteSettings,
    display_url,
    find_api_key,
    models_url,
)

log = logging.getLogger(__name__)
KEY_FIX = ("give the key the server was started with: `voxcap serve` printed its file; copy it to "
           f"~/.config/voxcap/remote-api-key (chmod 600){ref('api_key_flags')}")
SERVER_FIX = ("start it on the computer with the GPU: `voxcap serve --model FOLDER` prints its "
              f"address; or check the host and port in {ref('server_url')}")
PROBE_WAIT_S = 5.0
_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0)


class Fatal(Exception):
    """The stream (or the start-up) cannot go on: message + fix for a person."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message, self.fix = message, fix


class Retry(Exception):
    """The connection is gone or could not be made; worth trying again later."""

    def __init__(self, reason: str, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.reason, self.message, self.fix = reason, message, fix


def backoff(attempt: int) -> float:
    """Seconds to wait before try ``attempt`` + 1: growing to 10 s, jittered so that many
    clients of one server do not come back in step."""
    base = _BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)]
    return base * random.uniform(0.8, 1.2)


def explain_connect_error(exc: BaseException, url: str, timeout: float) -> Fatal | Retry:
    """A person's reading of a failure to connect to ``url`` (already safe to show)."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

    if isinstance(exc, (Fatal, Retry)):
        return exc
    if isinstance(exc, InvalidStatus):
        code = exc.response.status_code
        if code == 401:
            return Fatal(f"The server at {url} refused the connection (HTTP 401): a missing "
                         "or wrong API key.",
                         KEY_FIX)
        if code in (403, 404):  # vLLM (Starlette) answers 403 to a websocket on an unknown path
            return Fatal(f"No realtime endpoint at {url} (HTTP {code}).",
                         "give the server's base address, e.g. ws://gpu-box:8000 (voxcap adds "
                         "/v1/realtime); the server must serve a Voxtral Realtime model")
        if code >= 500 or code == 429:
            return Retry("server error", f"The server at {url} answered HTTP {code}.",
                         "see the server's log")
        return Fatal(f"The server at {url} refused the websocket (HTTP {code}).",
                     "check the address: is it a vLLM server?")
    if isinstance(exc, InvalidURI):
        return Fatal(f"The server address {url} is not a valid websocket URL.",
                     f"e.g. {ref('server_url', 'ws://gpu-box:8000')}")
    if isinstance(exc, ConnectionRefusedError):
        return Retry("refused", f"Cannot connect to the vLLM server at {url}: connection "
                     "refused (nothing listens there).", SERVER_FIX)
    if isinstance(exc, socket.gaierror):
        return Retry("host not found", f"Cannot find the server host of {url}.",
                     f"check the host name in {ref('server_url')} and the network")
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return Retry("timeout", f"The server at {url} did not answer within {timeout:.0f} s.",
                     "check the address, the network and any firewall")
    if isinstance(exc, ssl.SSLError):
        return Fatal(f"The TLS handshake with {url} failed ({exc.reason or 'SSL error'}).",
                     "use ws:// for a server without TLS, or give it a trusted certificate")
    if isinstance(exc, ConnectionClosed):
        return Retry("disconnected", f"The server at {url} closed the connection.",
                     "see the server's log")
    if isinstance(exc, InvalidHandshake):
        return Fatal(f"The server at {url} did not answer as a websocket server "
                     f"({type(exc).__name__}).", "check the address and port: is it the vLLM "
                     "server?")
    if isinstance(exc, OSError):
        why = exc.strerror or type(exc).__name__
        return Retry("network", f"Cannot connect to the vLLM server at {url}: {why}.",
                     SERVER_FIX)
    return Retry("error", f"Connecting to {url} failed ({type(exc).__name__}).", "")


class _RedactHeaders(logging.Filter):
    """websockets logs each handshake header at DEBUG: never the Authorization header. It logs
    every frame too (audio, caption text): only when the person asked for text in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in ("> %s", "< %s") and not logs.text_allowed():
            return False
        args = record.args
        if isinstance(args, tuple) and len(args) >= 2 and isinstance(args[0], str) \
                and args[0].lower() in ("authorization", "proxy-authorization"):
            record.args = (args[0], "<redacted>") + tuple(args[2:])
        return True


ws_logger = logging.getLogger(f"{__name__}.websocket")
ws_logger.addFilter(_RedactHeaders())


def _refused(url: str, why: str) -> Retry:
    return Retry("another user's port", f"Not connecting to {display_url(url)}: {why}; the API key "
                 "is not sent to it.",
                 "stop that program, or start voxcap serve on another port and point voxcap there")


def check_peer(sock: socket.socket, url: str) -> None:
    """Retry, before any header is sent, when the program that accepted the connected ``sock``
    is another user's (e.g. one that took the port while ``voxcap serve`` or the ssh tunnel was
    down): the key goes to nobody else, whichever key it is (found or given). The connected
    socket itself is read, so a listener swapped in after a check cannot get it."""
    why = listeners.untrusted_peer(sock)
    if why is not None:
        raise _refused(url, why)


async def open_checked(url: str, timeout: float) -> socket.socket:
    """A TCP connection to ``url``'s host and port whose other end has passed ``check_peer``."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme in ("wss", "https") else 80)
    try:
        sock = await asyncio.wait_for(asyncio.to_thread(
            listeners.connect_checked, parts.hostname or "", port, timeout), timeout)
    except listeners.PeerRefused as exc:
        raise _refused(url, exc.why) from None
    sock.setblocking(False)
    return sock


async def connect(url: str, api_key: str | None, timeout: float, *, keepalive: bool = True,
                  compression: str | None = "deflate"):
    """The websocket to ``url`` (a realtime URL), or Fatal/Retry explaining why not.
    ``keepalive``: pings every 20 s, so a dead network is noticed while the stream is quiet;
    ``compression``: what the client offers (websockets' default, permessage-deflate). With a
    key, the connection is made and its other end checked (``check_peer``) before the key goes
    (through a proxy the person configured, the proxy is the other end websockets connects to)."""
    from websockets.asyncio.client import connect as ws_connect
    from websockets.proxy import get_proxy
    from websockets.uri import parse_uri

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
    ping = 20 if keepalive else None
    try:
        direct = api_key and get_proxy(parse_uri(url)) is None
        sock = await open_checked(url, timeout) if direct else None
        return await ws_connect(
            url, sock=sock, additional_headers=headers, open_timeout=timeout, ping_interval=ping,
            ping_timeout=ping, close_timeout=2, max_size=2**22, compression=compression,
            user_agent_header=f"voxcap/{__version__}", logger=ws_logger)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is explained
        raise explain_connect_error(exc, display_url(url), timeout) from None


async def send(ws, message: protocol.ClientMessage) -> None:
    await ws.send(protocol.encode(message))


async def receive(ws, timeout: float | None = None) -> protocol.ServerMessage:
    """The next message (TimeoutError after ``timeout`` s; ConnectionClosed when it closes)."""
    frame = await (ws.recv() if timeout is None else asyncio.wait_for(ws.recv(), timeout))
    return protocol.decode(frame)


async def open_session(ws, model: str, url: str, timeout: float) -> None:
    """A session's start: the server's ``session.created``, then ``session.update {model}``."""
    msg = await receive(ws, timeout)
    if not isinstance(msg, protocol.SessionCreated):
        sent = msg.type if isinstance(msg, protocol.Unreadable) else msg.TYPE
        raise Fatal(f"The server at {url} did not open a realtime session (it sent {sent!r}).",
                    "check the address: is it a vLLM server with a realtime model?")
    await send(ws, protocol.SessionUpdate(model))


async def close(ws) -> None:
    try:
        await asyncio.wait_for(ws.close(), 3)
    except BaseException:  # closing a dead socket
        log.debug("closing a websocket failed", exc_info=True)


# ------------------------------------------------------------- start-up probes ----
@dataclass(frozen=True)
class Served:
    """What ``/v1/models`` said: the model to ask for and its max session length."""

    model: str
    max_model_len: int | None


async def probe_models(s: RemoteSettings, url: str) -> Served:
    """GET /v1/models: is the model served there (none named: the server's only one), and its
    max session length. A server without the route (a proxy exposing only the websocket) is not
    an error; the websocket probe decides then."""
    timeout = s.connect_timeout_s

    def fetch():
        req = urllib.request.Request(models_url(s.server_url),
                                     headers={"User-Agent": f"voxcap/{__version__}"})
        if s.api_key:
            req.add_unredirected_header("Authorization", f"Bearer {s.api_key}")
        try:
            with _checked_opener(s.server_url).open(req, timeout=timeout) as r:
                return r.status, r.read(1 << 20)
        except urllib.error.HTTPError as e:
            return e.code, b""

    try:
        status, body = await asyncio.to_thread(fetch)
    except urllib.error.URLError as e:  # Retry (refused, no route, timeout) or Fatal
        reason = e.reason if isinstance(e.reason, BaseException) else OSError(str(e.reason))
        raise explain_connect_error(reason, url, timeout) from None
    except (OSError, TimeoutError) as e:
        raise explain_connect_error(e, url, timeout) from None
    if status in (401, 403):
        raise Fatal(f"The server at {url} refused the API key (HTTP {status})" if s.api_key else
                    f"The server at {url} requires an API key (HTTP {status}).", KEY_FIX)
    models = _models(body) if status == 200 else {}
    model = s.server_model
    if not model:  # "the server's only model"
        if len(models) != 1:
            listed = (f"it serves {', '.join(sorted(models)[:5])}" if models
                      else "it does not list its models")
            raise Fatal(f"Which model of the server at {url}? ({listed}).",
                        f"name it with {ref('server_model', 'NAME')}")
        model = next(iter(models))
    if models and model not in models:
        served = ", ".join(sorted(models)[:5])
        raise Fatal(f"The server at {url} does not serve the model {model!r} "
                    f"(it serves: {served}).", f"use {ref('server_model', min(models))}")
    max_len = models.get(model, {}).get("max_model_len")
    return Served(model, int(max_len) if isinstance(max_len, int) and max_len > 0 else None)


def _checked_opener(url: str) -> urllib.request.OpenerDirector:
    """urllib, with every connection's other end checked (``check_peer``) before a header goes."""

    class CheckedHTTP(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            check_peer(self.sock, url)

    class CheckedHTTPS(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            check_peer(self.sock, url)

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(CheckedHTTP, req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req):  # the handler's own TLS context (urllib keeps it private)
            return self.do_open(CheckedHTTPS, req, context=getattr(self, "_context", None))

    return urllib.request.build_opener(Http, Https)


def _models(body: bytes) -> dict[str, dict]:
    try:
        data = json.loads(body)
        return {m["id"]: m for m in data.get("data", []) if isinstance(m, dict)}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}


async def probe_realtime(s: RemoteSettings, url: str) -> None:
    """Open the realtime websocket and check the model. The server acknowledges a good
    ``session.update`` with silence, so an unknown event follows it: its error reply says
    the update was handled (events are handled in order)."""
    ws = await connect(s.realtime_url, s.api_key, s.connect_timeout_s)  # Retry: unreachable
    try:
        await open_session(ws, s.server_model, url, s.connect_timeout_s)
        await send(ws, protocol.UnknownEvent())
        deadline = time.monotonic() + PROBE_WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await receive(ws, left)
            except TimeoutError:
                break  # no complaint about the model
            if isinstance(msg, protocol.ErrorEvent):
                if msg.code == protocol.MODEL_NOT_FOUND:
                    raise Fatal(f"The server at {url} does not serve the model {s.server_model!r}.",
                                "give the name in the server's /v1/models "
                                "(--served-model-name, or the path it was started with)")
                break  # the probe's own "unknown event": the model was accepted
    except Fatal:
        raise
    except Exception as exc:  # noqa: BLE001
        err = explain_connect_error(exc, url, s.connect_timeout_s)
        raise Fatal(err.message, err.fix) from None
    finally:
        await close(ws)


def key_made_meanwhile(s: RemoteSettings) -> tuple[str, str] | None:
    """(key, where it was found) when none was set at the start and one is there now: found
    as the app and the CLI find it (find_api_key). A server on this computer started after
    the app writes its key as it starts."""
    if s.api_key is not None:
        return None
    try:
        key, where = find_api_key(s.server_url)
    except ConfigError:  # a key file others can read: the probe's refusal says it
        return None
    return (key, where) if key else None
