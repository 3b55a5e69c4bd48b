"""A real TCP proxy on 127.0.0.1 that forwards to a target, throttling the client -> server
direction to ``rate`` bytes/s (a slow network or an overloaded server, as the client sees it).

It reads at most ``chunk`` bytes at a time and only as fast as the rate allows, so TCP flow
control pushes back on the client: the proxy itself holds no more than one chunk.
"""

from __future__ import annotations

import asyncio
import socket
import threading


class ThrottleProxy:
    def __init__(self, target_port: int, rate: float, chunk: int = 4096, port: int = 0) -> None:
        """``port``: where it listens (0: any free one)."""
        self.target_port, self.rate, self.chunk = target_port, rate, chunk
        self.port: int | None = port
        self.bytes_up = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._main, name="throttle-proxy", daemon=True)
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> ThrottleProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _main(self) -> None:
        self._loop = asyncio.new_event_loop()
        sock = socket.socket()
        sock.bind(("127.0.0.1", self.port or 0))
        self.port = sock.getsockname()[1]
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, sock=sock, limit=self.chunk))
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            self._loop.close()

    async def _handle(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        try:
            sr, sw = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            cw.close()
            return
        # small receive buffers: the client feels the throttle instead of the kernel buffering it
        for w in (cw, sw):
            s = w.get_extra_info("socket")
            if s is not None:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        await asyncio.gather(self._pipe(cr, sw, throttle=True), self._pipe(sr, cw, False),
                             return_exceptions=True)

    async def _pipe(self, r: asyncio.StreamReader, w: asyncio.StreamWriter,
                    throttle: bool) -> None:
        try:
            while data := await r.read(self.chunk):
                if throttle:
                    self.bytes_up += len(data)
                    await asyncio.sleep(len(data) / self.rate)
                w.write(data)
                await w.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            w.close()
