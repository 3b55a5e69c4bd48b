"""Addresses on the network, for the caption server and ``voxcap serve``: this computer's
address on its network, the one web site allowed to read the captions, checked, and the
ports and addresses used unless a setting names others.

    lan_address()                        # "192.168.1.20" (the default route's), or 127.0.0.1
    parse_origin("https://Notes.example")  # "https://notes.example"; ValueError(one line)
    url_host("fe80::1")                  # "[fe80::1]": a host as it goes into a URL
    is_loopback_host("127.0.0.1")        # True: this computer only (not "127.evil.example")
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket

# A DNS name as browsers send it in Origin (lower case, IDNs as punycode): labels of letters,
# digits and hyphens; or an IPv4 address; or an IPv6 address in brackets.
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_ORIGIN = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[^\]/]*\]|[^:/?#\[\]@]*)"
                     r"(:(?P<port>[0-9]*))?")
DEFAULT_PORTS = {"http": 80, "https": 443}
SHARE_PORT = 8765  # the caption page's, on this computer (and the network with LAN sharing)
OBS_ADDRESS = "ws://127.0.0.1:4455"  # obs-websocket's own default, OBS on this computer
ORIGIN_EXAMPLE = "https://notes.example or http://127.0.0.1:3000"


def lan_address() -> str:
    """This computer's address on its network (the one its default route uses); no packet is
    sent (a UDP socket only picks its source address). 127.0.0.1 without a network."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 9))
        return s.getsockname()[0]
    return "127.0.0.1"


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host name, brackets allowed) can only be this computer: the
    name ``localhost``, or an address ``ipaddress`` calls loopback (127.0.0.0/8, ::1, and
    ::ffff:127.x.y.z). Any other name, "127.evil.example" included, could point anywhere."""
    host = host.strip().lower()
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.removeprefix("[").removesuffix("]").split("%")[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def url_host(host: str) -> str:
    """A host name or address as it is written in a URL (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def parse_origin(text: str) -> str:
    """The one web site (origin) allowed to read the captions, as a browser sends it in its
    ``Origin`` header: exactly ``scheme://host[:port]`` with http or https, nothing else.
    Returns it normalised (lower case, a default port left out: browsers leave it out, and
    the comparison is exact). Raises ValueError with one line saying what is wrong."""
    value = text.strip()
    _refuse_all_or_none(value)
    m = _ORIGIN.fullmatch(value.lower())
    if m is None:
        if "://" in value and re.search(r"://[^/]*[/?#@]|://.*[/?#]$", value):
            raise ValueError("a site has no path, query or user name: give scheme://host[:port] "
                             "only (no “/” at the end), e.g. " + ORIGIN_EXAMPLE)
        raise ValueError("not a site: give scheme://host[:port], e.g. " + ORIGIN_EXAMPLE)
    scheme = m["scheme"]
    if scheme not in DEFAULT_PORTS:
        raise ValueError(f"a site is http:// or https://, not {scheme}://; e.g. " + ORIGIN_EXAMPLE)
    host = _origin_host(m["host"])
    port = _origin_port(m["port"], scheme)
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def _refuse_all_or_none(value: str) -> None:
    """What is not one site at all: every site, the sandbox's, none, a list, or not as sent."""
    if value == "*":
        raise ValueError("“*” would let every web site read the captions; give one site, e.g. "
                         + ORIGIN_EXAMPLE)
    if value.lower() == "null":
        raise ValueError("“null” is the origin of sandboxed frames and local files, so any of "
                         "them could read the captions; give one site, e.g. " + ORIGIN_EXAMPLE)
    if not value:
        raise ValueError("no site given; e.g. " + ORIGIN_EXAMPLE)
    if any(c.isspace() or c == "," for c in value):
        raise ValueError("one site only, as scheme://host[:port], e.g. " + ORIGIN_EXAMPLE)
    if not value.isascii() or not value.isprintable():
        raise ValueError("write the site as a browser sends it (international names as "
                         "xn--…), e.g. " + ORIGIN_EXAMPLE)


def _origin_host(host: str) -> str:
    """The host of an origin, checked and written as browsers write it."""
    if host.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            raise ValueError(f"{host} is not an IPv6 address; e.g. http://[::1]:3000") from None
    if re.fullmatch(r"[0-9.]+", host):
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            raise ValueError(f"{host} is not an IPv4 address; e.g. http://127.0.0.1:3000") \
                from None
    if not _NAME.fullmatch(host) or len(host) > 253:
        raise ValueError(f"{host or 'an empty name'} is not a host name; e.g. " + ORIGIN_EXAMPLE)
    return host


def _origin_port(port: str | None, scheme: str) -> str | None:
    """The port of an origin, checked; None when absent or the scheme's default."""
    if port is None:
        return None
    if not port or len(port) > 5 or not 1 <= int(port) <= 65535 or port != str(int(port)):
        raise ValueError(f"port {port or '(empty)'} is not a TCP port (1-65535)")
    return None if int(port) == DEFAULT_PORTS[scheme] else port
