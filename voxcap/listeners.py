"""Who listens on a TCP port of this computer: the user ids of the sockets listening on it at a
loopback or wildcard address (the ones a connection to 127.0.0.1 or ::1 can reach), read from
Linux's /proc/net/tcp and tcp6. Lets voxcap give this computer's ``voxcap serve`` key only to a
server run by the same user, not to another user's program that took the port first.

    listening_users(8000)   # {1000}; set() when nothing listens; None when it cannot be told
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

LISTEN = "0A"  # the kernel's TCP_LISTEN in the "st" column
TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def _address(hex_addr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """/proc's address: 32-bit words in the host's (little-endian) byte order."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


def _reachable_from_loopback(ip) -> bool:
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or ip.is_unspecified or (mapped is not None and mapped.is_loopback)


def listening_users(port: int, tables=TABLES) -> set[int] | None:
    users: set[int] = set()
    read_any = False
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        read_any = True
        for line in lines:
            f = line.split()
            if len(f) < 8 or f[3] != LISTEN:
                continue
            addr, _, hex_port = f[1].partition(":")
            if int(hex_port, 16) == port and _reachable_from_loopback(_address(addr)):
                users.add(int(f[7]))
    return users if read_any else None
