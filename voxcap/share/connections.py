"""What a connection to the caption server may hold: uvicorn's HTTP/1.1 protocol (h11) with the
limits a server open to a network needs, and the book of open connections they are counted in.

uvicorn alone counts open sockets against one limit (``limit_concurrency``) and gives a socket
that never sends a request no timeout, so a few dozen idle sockets made every request a 503,
and a phone that left the Wi-Fi held its viewer slot for ~15 minutes. Here instead:

- **Request deadline** (``request_timeout_s``): a connection must deliver a whole request (its
  head, and a body if it sends one) within this time of opening, or of its previous response;
  else it is closed. Bytes dripped one at a time do not extend it (uvicorn's keep-alive timer
  restarts on every byte). A request head, or anything sent before it ends, over
  ``max_head_bytes`` is answered 431 and the connection closed.
- **Per address** (``per_address``): at most this many connections from one network address.
  Addresses of this computer (127.0.0.0/8, ::1) are not limited this way: OBS's browser sources,
  browsers and programs here all come from 127.0.0.1 (``loopback_exempt``).
- **In all** (``max_connections``): at the limit, a new connection first closes the oldest one
  that is idle (no request in progress: never sent one, or waiting between requests); only
  when none is idle is the new one refused (503). Idle sockets therefore never lock anyone
  out, and a caption feed (a response in progress) is never closed for a newcomer.
- **A peer that vanished** (``user_timeout_s``): TCP_USER_TIMEOUT on every connection, so data
  the peer does not acknowledge for this long (a phone gone from the network; also a viewer
  whose window stayed shut) ends the connection, and its viewer slot, instead of the kernel's
  ~15 minutes of retransmissions.

Everything here runs on the server's event loop (no locks). Messages go to the server's
rate-limited traffic log (``guard.TrafficLog``), never to uvicorn's own logger: a flood of bad
requests neither fills voxcap's log nor prints anything on a terminal.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import OrderedDict
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle


def _plain(status: str, text: str) -> bytes:
    """A whole HTTP response that closes the connection (sent before uvicorn sees a request)."""
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body


REFUSED_503 = _plain("503 Service Unavailable", "too many connections: try again shortly")
REFUSED_431 = _plain("431 Request Header Fields Too Large", "request head too large")


@dataclass(frozen=True)
class ConnectionLimits:
    request_timeout_s: float = 10.0
    max_head_bytes: int = 8192
    per_address: int = 16
    max_connections: int = 128
    loopback_exempt: bool = True
    user_timeout_s: float = 45.0


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class ConnectionBook:
    """The open connections, oldest first, and per address."""

    def __init__(self, limits: ConnectionLimits, traffic) -> None:
        self.limits = limits
        self.traffic = traffic
        self.open: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.by_address: dict[str, OrderedDict] = {}
        self.refused = 0  # connections turned away (no idle one to close instead)
        self.evicted = 0  # idle connections closed for a newcomer
        self.timed_out = 0  # connections that did not deliver a request in time

    def __len__(self) -> int:
        return len(self.open)

    def admit(self, conn: GuardedH11Protocol) -> bool:
        """Book ``conn`` in; False when it must be refused (nothing idle to make room)."""
        address = conn.address
        mine = self.by_address.get(address)
        limited = not (self.limits.loopback_exempt and is_loopback(address))
        if limited and mine is not None and len(mine) >= self.limits.per_address:
            if not self._evict_idle(mine, f"from {address}"):
                return self._refuse(f"{self.limits.per_address} connections from {address} "
                                    "already, none idle")
        if len(self.open) >= self.limits.max_connections:
            if not self._evict_idle(self.open, "in all"):
                return self._refuse(f"{self.limits.max_connections} connections open, none idle")
        self.open[conn] = None
        self.by_address.setdefault(address, OrderedDict())[conn] = None
        return True

    def release(self, conn: GuardedH11Protocol) -> None:
        self.open.pop(conn, None)
        mine = self.by_address.get(conn.address)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_address[conn.address]

    def _evict_idle(self, conns, where: str) -> bool:
        for old in conns:
            if old.idle:
                self.evicted += 1
                self.traffic.debug("share: closed an idle connection from %s (limit %s)",
                                   old.address, where)
                old.close_now()
                self.release(old)
                return True
        return False

    def _refuse(self, why: str) -> bool:
        self.refused += 1
        self.traffic.info("share: refused a connection (%s)", why)
        return False


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, booked in ``book`` and held to its limits."""

    def __init__(self, *args, book: ConnectionBook, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.book = book
        self.logger = book.traffic  # uvicorn's messages (bad requests...) into the traffic log
        self.address = "?"
        self._booked = False
        self._deadline: asyncio.TimerHandle | None = None  # while a request is awaited
        self._head_bytes = 0  # bytes received while a request head is awaited
        # the cycle whose response completed last (a new one = a request)
        self._served: RequestResponseCycle | None = None

    # --------------------------------------------------------------------- state ----
    @property
    def idle(self) -> bool:
        """No request in progress: none sent yet, or waiting between requests."""
        return self.cycle is None or self.cycle.response_complete

    def _awaiting_request(self) -> bool:
        return self.cycle is self._served

    # ----------------------------------------------------------------- asyncio ----
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.address = (self.client or ("?", 0))[0]
        _set_user_timeout(transport, self.book.limits.user_timeout_s)
        if not self.book.admit(self):
            transport.write(REFUSED_503)
            self.close_now()
            return
        self._booked = True
        self._arm()

    def connection_lost(self, exc) -> None:
        self._disarm()
        if self._booked:
            self.book.release(self)
            self._booked = False
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        if self._awaiting_request():
            self._head_bytes += len(data)
            if self._head_bytes > self.book.limits.max_head_bytes:
                self.traffic_refusal(431, "a request head over "
                                     f"{self.book.limits.max_head_bytes} bytes")
                self.transport.write(REFUSED_431)
                self.close_now()
                return
        try:
            super().data_received(data)
        except Exception:  # noqa: BLE001 - a request uvicorn could not take: this one goes
            self.book.traffic.warning("share: closed a connection whose request could not be "
                                      "read", exc_info=True)
            self.close_now()
            return
        self._check_request()

    def on_response_complete(self) -> None:
        self._served = self.cycle
        self._head_bytes = 0
        self._arm()
        super().on_response_complete()  # may take the next pipelined request at once
        self._check_request()

    def _unsupported_upgrade_warning(self) -> None:
        pass  # the guard refuses the request (400) and says so in the log

    # ------------------------------------------------------------------- helpers ----
    def _check_request(self) -> None:
        """Disarm the deadline once a whole request has arrived."""
        cycle = self.cycle
        if cycle is not None and cycle is not self._served and not cycle.more_body:
            self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.book.limits.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self.book.timed_out += 1
        self.book.traffic.debug("share: closed a connection from %s that sent no whole request "
                                "in %.0f s", self.address, self.book.limits.request_timeout_s)
        self.close_now()

    def traffic_refusal(self, status: int, why: str) -> None:
        self.book.traffic.info("share: refused a request from %s (%d: %s)", self.address,
                               status, why)

    def close_now(self) -> None:
        """Close the connection (an open response is cut: its viewer leaves)."""
        self._disarm()
        if self.conn.our_state not in (h11.ERROR, h11.CLOSED):
            try:
                self.conn.send(h11.ConnectionClosed())
            except h11.LocalProtocolError:
                pass  # mid-message: closing the socket is all that is left
        self.transport.close()


def _set_user_timeout(transport, seconds: float) -> None:
    """TCP_USER_TIMEOUT (Linux): unacknowledged data for ``seconds`` ends the connection."""
    sock = transport.get_extra_info("socket")
    option = getattr(socket, "TCP_USER_TIMEOUT", None)
    if sock is None or option is None or not seconds:
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, option, int(seconds * 1000))
    except OSError:
        pass  # not TCP (a test's socket pair): nothing to time out
