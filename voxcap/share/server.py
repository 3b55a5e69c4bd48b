"""The caption server: Starlette routes served by uvicorn on a thread with its own event loop.

    server = ShareServer(port=8765, lan=False, session_source=lambda: session_or_none)
    server.start()              # binds now (ShareError naming the problem and its fix), serves
    hub.subscribe(server.post)  # any thread; quick (one call_soon_threadsafe)
    server.url, server.viewers  # what to show; viewers = open caption feeds
    server.stop()               # every viewer is disconnected at once, the port is freed

Routes (GET only, see ``guard``): ``/`` the caption page, ``/events`` the feed (Server-Sent
Events, one JSON message each, see ``feed``), ``/captions.txt`` and ``/captions.vtt`` the
session so far (``captions.export``). It listens on 127.0.0.1, or with ``lan`` on every
IPv4 address with a token in every URL (``require_token``: the token on 127.0.0.1 too). At
most ``max_viewers`` feeds at once (503 beyond); what one connection may hold (a request
deadline, connections per address and in all, a vanished peer's timeout) is ``connections``'.
The session so far comes from ``session_source`` (the journal) when the server starts, so a
page that reconnects after a restart of the server fills in what it missed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import functools
import hashlib
import hmac
import logging
import re
import secrets
import socket
import threading
import time
from importlib import resources
from typing import TYPE_CHECKING

from ..captions.export import render
from ..captions.records import JOURNAL_NAME
from ..errors import VoxcapError
from ..loop_thread import LoopThread
from ..netaddr import SHARE_PORT, lan_address, parse_origin
from .exports import Exports
from .feed import CaptionFeed
from .guard import PROOF_PATH, Guard, TrafficLog

if TYPE_CHECKING:  # for the annotations: start() imports them when the server starts
    import uvicorn

    from .connections import ConnectionBook

log = logging.getLogger(__name__)
DEFAULT_PORT = SHARE_PORT  # the settings' default too (app/settings.py)
MAX_VIEWERS = 50
HEARTBEAT_S = 15.0
RETRY_MS = 2000
SEND_BUFFER = 64 * 1024
KEEP_ALIVE_S = 5
PING = 'data: {"type":"ping"}\n\n'
RELOADS = 3  # journal re-reads when the first live deltas show a gap (the journal lagged)
__all__ = ["DEFAULT_PORT", "MAX_VIEWERS", "ShareError", "ShareServer", "lan_address",
           "new_token"]


class ShareError(VoxcapError):
    """The caption server cannot start."""


def new_token() -> str:
    return secrets.token_urlsafe(16)


PROOF_LABEL = "voxcap-share-proof:"
_NONCE = re.compile(r"[0-9a-f]{16,64}")


def token_proof(token: str, nonce: str) -> str:
    """What the server answers at /proof?nonce=N: HMAC-SHA256(token, label + N) in hex. The
    page computes the same before it sends the token anywhere (page.html): only a server that
    knows the token can answer it, and the answer does not give the token away."""
    return hmac.new(token.encode("utf-8"), (PROOF_LABEL + nonce).encode("ascii"),
                    hashlib.sha256).hexdigest()


def _page() -> tuple[str, str]:
    """The page's HTML and its Content-Security-Policy (hashes of its inline script/style)."""
    html = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")

    def digest(kind: str) -> str:
        found = re.search(rf"<{kind}>(.*?)</{kind}>", html, re.S)
        assert found is not None, f"page.html has no <{kind}>"
        body = found.group(1)
        return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
    csp = (f"default-src 'none'; script-src {digest('script')}; style-src {digest('style')}; "
           "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
           "frame-ancestors 'none'")
    return html, csp


class _ToVoxcapLog(logging.Handler):
    """uvicorn's server messages into voxcap's log (its INFO lines at DEBUG), never onto a
    terminal through Python's last-resort handler."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno <= logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        logging.getLogger("voxcap.share.uvicorn").handle(record)


def _route_uvicorn_log() -> None:
    uv = logging.getLogger("uvicorn.error")
    if not any(isinstance(h, _ToVoxcapLog) for h in uv.handlers):
        uv.addHandler(_ToVoxcapLog())
        uv.propagate = False


def shown_value(text: str, limit: int = 40) -> str:
    """A value the person typed, quoted for a message (shortened)."""
    return "“" + (text if len(text) <= limit else text[:limit] + "…") + "”"


class ShareServer:
    def __init__(self, *, port: int = DEFAULT_PORT, lan: bool = False, token: str = "",
                 require_token: bool = False, allow_origin: str = "", bind: str | None = None,
                 session_source=None, masker=None, style: dict | None = None,
                 max_viewers: int = MAX_VIEWERS, viewer_queue: int | None = None,
                 limits=None) -> None:
        self.port = port
        self.lan = lan
        self.token = (token or new_token()) if lan or require_token else ""
        self.allow_origin = allow_origin
        self.bind = bind or ("0.0.0.0" if lan else "127.0.0.1")
        self.session_source = session_source or (lambda: None)
        self.max_viewers = max_viewers
        self.limits = limits  # connections.ConnectionLimits (None: its defaults)
        kw = {} if viewer_queue is None else {"viewer_queue": viewer_queue}
        self.feed = CaptionFeed(masker=masker, style=style, **kw)
        self.traffic = TrafficLog(log)
        self.guard: Guard | None = None
        self.book: ConnectionBook | None = None  # once started
        self._uv: uvicorn.Server | None = None
        self._thread: LoopThread | None = None
        self._ready = threading.Event()
        self._loading = True
        self._held: list = []  # events that came while the journal was read
        self._reloads = 0
        self._journalled: set[str] = set()  # streams the journal had when loaded
        self._events = 0  # events the feed has taken (part of what an export is made of)
        self._journal_file = None  # the journal the last export read (its size and time too)
        self.exports = Exports(self._render, self._export_state)

    def __repr__(self) -> str:  # never the token
        return (f"<ShareServer {self.bind}:{self.port} lan={self.lan} "
                f"token={'yes' if self.token else 'no'} viewers={self.viewers}>")

    # ------------------------------------------------------------------ life cycle ----
    def start(self, timeout: float = 10.0) -> ShareServer:
        import uvicorn

        from .connections import ConnectionBook, ConnectionLimits, GuardedH11Protocol

        if self.allow_origin:
            try:
                self.allow_origin = parse_origin(self.allow_origin)
            except ValueError as exc:
                raise ShareError(f"Allow site {shown_value(self.allow_origin)}: {exc}.",
                                 "correct it in Settings → Share captions: Allow site, or "
                                 "leave it empty") from None
        sock = self._bind()
        self.port = sock.getsockname()[1]
        limits = self.limits or ConnectionLimits(max_connections=self.max_viewers + 64)
        book = self.book = ConnectionBook(limits, self.traffic)
        self.guard = Guard(self._app(), token=self.token, lan=self.lan,
                           allow_origin=self.allow_origin, traffic=self.traffic)
        _route_uvicorn_log()
        config = uvicorn.Config(self.guard, log_config=None, access_log=False, lifespan="off",
                                # uvicorn calls it to make each connection's protocol: its
                                # annotation asks for a class, which a partial is not
                                ws="none", http=functools.partial(  # type: ignore[arg-type]
                                    GuardedH11Protocol, book=book),
                                loop="asyncio", server_header=False, limit_concurrency=None,
                                proxy_headers=False,  # X-Forwarded-For from 127.0.0.1: not believed
                                h11_max_incomplete_event_size=limits.max_head_bytes,
                                timeout_graceful_shutdown=2, timeout_keep_alive=KEEP_ALIVE_S)
        uv = self._uv = uvicorn.Server(config)
        self._thread = LoopThread(functools.partial(self._main, sock, uv), name="voxcap-share",
                                  what="the caption server", logger=log)
        self._thread.start()
        if not self._ready.wait(timeout) or not self._thread.alive:
            self.stop()
            raise ShareError("The caption server did not start.", "see the log for why")
        log.info("share: serving on %s:%d (%s)", self.bind, self.port,
                 "network, with a token" if self.lan else
                 "this computer only, with a token" if self.token else "this computer only")
        return self

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # each viewer's kernel buffer, inherited by every connection: captions need ~1 kB/s,
        # and a sleeping phone then ties up this much, not the 4 MB autotuning would allow
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        try:
            sock.bind((self.bind, self.port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            log.warning("share: cannot listen on %s:%s", self.bind, self.port, exc_info=True)
            if exc.errno == errno.EADDRINUSE:
                raise ShareError(f"Port {self.port} is in use (another program, or another "
                                 "voxcap sharing captions).",
                                 "pick another port (Settings → Share captions, or "
                                 "--share PORT)") from None
            if exc.errno == errno.EACCES:
                raise ShareError(f"Port {self.port} needs administrator rights.",
                                 "pick a port from 1024 up") from None
            raise ShareError(f"Cannot share captions on port {self.port}: {exc.strerror}.",
                             "pick another port") from None
        sock.setblocking(False)
        return sock

    async def _main(self, sock: socket.socket, uv: uvicorn.Server) -> None:
        try:
            serving = asyncio.create_task(uv.serve(sockets=[sock]))
            await self._load()
            while not uv.started and not serving.done():
                await asyncio.sleep(0.01)
            self._ready.set()
            await serving
        finally:
            sock.close()
            self._ready.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Disconnect every viewer and free the port (returns once done, ``timeout`` at most)."""
        uv, thread = self._uv, self._thread
        if thread is not None and uv is not None:
            def close() -> None:
                self.feed.close_viewers()
                uv.should_exit = True
            thread.call_soon(close)
            if not thread.join(timeout):
                uv.force_exit = True
                thread.join(timeout)
        log.info("share: stopped")

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.alive and self._ready.is_set()

    # -------------------------------------------------------------------- status ----
    @property
    def viewers(self) -> int:
        return len(self.feed.viewers)

    @property
    def url(self) -> str:
        host = lan_address() if self.lan else "127.0.0.1"
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def local_url(self, path: str = "/") -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}{path}" + (f"{sep}token={self.token}"
                                                         if self.token else "")

    def cpu_seconds(self, timeout: float = 5.0) -> float:
        """CPU time the server's thread (its event loop: HTTP, feed, every viewer) has used."""
        async def now() -> float:
            return time.thread_time()
        assert self._thread is not None, "the caption server is not started"
        return self._thread.run(now(), timeout)

    @property
    def connections(self) -> int:
        """Open connections (the book's count; read from any thread, for tests and status)."""
        return len(self.book) if self.book is not None else 0

    # --------------------------------------------------------------------- input ----
    def post(self, event) -> None:
        """An event from the controller, on any thread (an ``EventHub`` subscriber); dropped
        when the server is not running."""
        if self._thread is not None:
            self._thread.call_soon(self._on_event, event)

    def call(self, fn, *args) -> None:
        """Run ``fn(*args)`` on the server's loop (style or masking changed in the app)."""
        if self._thread is not None:
            self._thread.call_soon(fn, *args)

    def _on_event(self, event) -> None:
        if self._loading:
            self._held.append(event)
            return
        sid, index = getattr(event, "stream_id", None), getattr(event, "index", None)
        if (index is not None and sid in self._journalled and self._reloads < RELOADS
                and index > self.feed.last_index.get(sid, -1) + 1):
            self._journalled.discard(sid)  # the journal had not written these yet: read again
            self._reloads += 1
            self._held.append(event)
            asyncio.get_running_loop().create_task(self._load(delay=0.2))
            return
        self._events += 1
        try:
            self.feed.on_event(event)
        except Exception:  # one bad event must not stop the feed
            log.exception("share: the feed failed on %s", type(event).__name__)

    async def _load(self, delay: float = 0.0) -> None:
        self._loading = True
        if delay:
            await asyncio.sleep(delay)
        try:
            session = await asyncio.to_thread(self.session_source)
        except Exception:  # without the journal the page starts empty
            log.exception("share: the session so far could not be read")
            session = None
        self.feed.load(session)
        self._events += 1
        self._journalled = set(self.feed.last_index)
        held, self._held = self._held, []
        self._loading = False
        for event in held:
            self._on_event(event)

    # --------------------------------------------------------------------- routes ----
    def _app(self):
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.middleware.cors import CORSMiddleware
        from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
        from starlette.routing import Route

        html, csp = _page()

        async def page(request):
            return HTMLResponse(html, headers={"content-security-policy": csp})

        async def events(request):
            if self.viewers >= self.max_viewers:
                return PlainTextResponse(f"too many viewers ({self.max_viewers}): try again "
                                         "later\n", status_code=503)
            return StreamingResponse(self._stream(request), media_type="text/event-stream",
                                     headers={"x-accel-buffering": "no"})

        async def proof(request):
            nonce = request.query_params.get("nonce", "")
            if not self.token or not _NONCE.fullmatch(nonce):
                return PlainTextResponse("no proof to give\n", status_code=404)
            return PlainTextResponse(token_proof(self.token, nonce))

        async def transcript(request):
            fmt = ".vtt" if request.url.path.endswith(".vtt") else ".txt"
            text = await self.exports.get(fmt)
            kind = "text/vtt" if fmt == ".vtt" else "text/plain"
            return PlainTextResponse(text, media_type=f"{kind}; charset=utf-8")

        middleware = []
        if self.allow_origin:
            middleware.append(Middleware(CORSMiddleware, allow_origins=[self.allow_origin],
                                         allow_methods=["GET"]))
        return Starlette(routes=[Route("/", page), Route("/events", events), Route(PROOF_PATH, proof),
                                 Route("/captions.txt", transcript),
                                 Route("/captions.vtt", transcript),
                                 Route("/favicon.ico", lambda _r: Response(status_code=204))],
                         middleware=middleware)

    async def _stream(self, request):
        wake = asyncio.Event()
        wake.set()  # its snapshot at once
        viewer = self.feed.add_viewer(wake.set)
        peer = request.client.host if request.client else "?"
        self.traffic.info("share: viewer from %s connected (%d)", peer, self.viewers)
        try:
            yield f"retry: {RETRY_MS}\n\n"
            while not viewer.closed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), HEARTBEAT_S)
                wake.clear()
                messages = viewer.take()
                if viewer.closed:
                    return
                if messages:
                    yield "".join(f"data: {m}\n\n" for m in messages)
                else:
                    yield PING  # the page's watchdog sees it: a silent stream is stale
        finally:
            self.feed.remove_viewer(viewer)
            self.traffic.info("share: viewer from %s left (%d; %d skips)", peer, self.viewers,
                              viewer.skips)

    def _export_state(self) -> tuple:
        """What an export is made of, cheaply (on the loop): the journal file as the last
        export found it (the app journals on a thread of its own, so it may lag the feed), the
        events the feed has taken, the masker."""
        stat = None
        if self._journal_file is not None:
            with contextlib.suppress(OSError):
                st = self._journal_file.stat()
                stat = (st.st_size, st.st_mtime_ns)
        return stat, self._events, self.feed.asm.masker

    def _render(self, fmt: str) -> str:
        session = None
        try:
            session = self.session_source()
        except Exception:  # falls back to what the feed kept
            log.exception("share: the session so far could not be read")
        masker = self.feed.asm.masker
        if session is not None and session.session_id == self.feed.session_id:
            self._journal_file = session.info.path / JOURNAL_NAME
            return render(session, fmt, masker=masker)[0]
        return render(list(self.feed.deltas), fmt, labels=dict(self.feed.labels),
                      masker=masker)[0]
