"""Who is at the other end of a socket on this computer, read from Linux's /proc/net/tcp and
tcp6 (or SO_PEERCRED for a Unix socket). Lets voxcap send a credential (a server key, the OBS
password, captions) only to a program of the same user, not to another user's program that
took the port first.

    untrusted_peer(sock)     # None: may be sent a credential; else why not, for a person
    listening_addresses(process_tree(pid))   # [("127.0.0.1", 8000), ...]: what they listen on

``untrusted_peer`` reads the CONNECTED socket: the program that accepted this very connection,
so no listener swapped in between a check and the connect (a race) gets anything.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import struct
from pathlib import Path

LISTEN = "0A"  # the kernel's TCP_LISTEN in the "st" column: a listener, not a connection
TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
# The users whose programs may be sent this user's credentials: this user, and root (who can
# read them anyway: refusing root would protect nothing and break a system-wide server).
TRUSTED = frozenset({os.getuid(), 0})

Ip = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(hex_addr: str) -> Ip:
    """/proc's address: 32-bit words in the host's (little-endian) byte order."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


def _plain(ip: Ip) -> Ip:
    """::ffff:127.0.0.1 as 127.0.0.1: a dual-stack server's side of an IPv4 connection."""
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip


def _rows(tables=TABLES) -> list[list[str]] | None:
    rows: list[list[str]] = []
    read_any = False
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        read_any = True
        rows += [f for f in (line.split() for line in lines) if len(f) >= 8]
    return rows if read_any else None


def _endpoint(field: str) -> tuple[Ip, int]:
    addr, _, hex_port = field.partition(":")
    return _plain(_address(addr)), int(hex_port, 16)


def peer_user(sock: socket.socket, tables=TABLES) -> int | None:
    """The user id of the program at the other end of the connected ``sock`` when that end is
    on this computer (its socket, accepted or still in the listener's queue, is in this
    network namespace's table under the listener's owner); None when it is not found there."""
    if sock.family == socket.AF_UNIX:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    local = sock.getsockname()
    peer = sock.getpeername()
    ours = (_plain(ipaddress.ip_address(local[0].split("%")[0])), local[1])
    theirs = (_plain(ipaddress.ip_address(peer[0].split("%")[0])), peer[1])
    for f in _rows(tables) or []:
        if f[3] != LISTEN and _endpoint(f[1]) == theirs and _endpoint(f[2]) == ours:
            return int(f[7])
    return None


def untrusted_peer(sock: socket.socket, tables=TABLES) -> str | None:
    """None when the other end of the connected ``sock`` may be sent this user's credentials:
    a program of this user (or root), or another computer (where TLS, if asked for, decides).
    Else why not, in words: another user's program, or a loopback peer that cannot be found."""
    try:
        uid = peer_user(sock, tables)
        peer_ip = None if sock.family == socket.AF_UNIX else \
            _plain(ipaddress.ip_address(sock.getpeername()[0].split("%")[0]))
    except OSError as exc:
        return f"its socket cannot be read ({exc.strerror or type(exc).__name__})"
    if uid is None:
        if peer_ip is not None and (peer_ip.is_loopback or peer_ip.is_unspecified):
            return "the program listening there cannot be told (no /proc/net/tcp)"
        return None
    if uid not in TRUSTED:
        return f"another user's program (uid {uid}) listens there"
    return None


class PeerRefused(Exception):
    """The other end of a new connection may not be sent a credential: ``why``, in words."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def connect_checked(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to ``host``:``port`` whose other end passed ``untrusted_peer`` (closed
    and PeerRefused otherwise; OSError when it cannot be made). Blocking: a thread's job."""
    sock = socket.create_connection((host, port), timeout)
    why = untrusted_peer(sock)
    if why is not None:
        sock.close()
        raise PeerRefused(why)
    return sock


def process_tree(root: int) -> list[int]:
    """``root`` and every process under it (read from /proc: the children of this user's
    processes)."""
    parents: dict[int, list[int]] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat_file.read_text()
        except OSError:  # gone meanwhile
            continue
        ppid = int(text.rpartition(")")[2].split()[1])
        parents.setdefault(ppid, []).append(int(stat_file.parent.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += parents.get(pid, [])
    return tree


def listening_addresses(pids: list[int], tables=TABLES) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the processes ``pids`` listen on, sorted."""
    inodes: set[str] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    found = set()
    for f in _rows(tables) or []:
        if f[3] == LISTEN and len(f) > 9 and f[9] in inodes:
            addr, port = _endpoint(f[1])
            found.add((str(addr), port))
    return sorted(found, key=lambda a: (a[1], a[0]))
