"""A network namespace standing in for an office box (the test's own: only its loopback device,
nothing leaves the machine): the host name resolves to a network address, 10.77.0.1, put on
that loopback device and named in a hosts file bound over /etc/hosts (a mount namespace of its
own). vLLM's gloo and NCCL pick their addresses from the host name.

    cmd = in_office(hosts_file, [sys.executable, ...])   # the command, run inside one
    listeners(ss_output)                                  # [("127.0.0.1", 41234), ...] from `ss -ltn`
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

OFFICE_ADDRESS = "10.77.0.1"
_SETUP = ('ip link set lo up && ip addr add {addr}/24 dev lo && mount --bind {hosts} /etc/hosts '
          '&& exec "$@"')

needs_namespaces = pytest.mark.skipif(
    os.getuid() != 0 or not all(shutil.which(t) for t in ("unshare", "nsenter", "ss", "ip")),
    reason="needs root, unshare, nsenter, ss and ip for a network namespace")


def hosts_file(folder: Path) -> Path:
    path = folder / "hosts"
    path.write_text(f"127.0.0.1 localhost\n{OFFICE_ADDRESS} {socket.gethostname()}\n")
    return path


def in_office(hosts: Path, cmd: list[str]) -> list[str]:
    return ["unshare", "-n", "-m", "sh", "-c", _SETUP.format(addr=OFFICE_ADDRESS, hosts=hosts),
            "sh", *cmd]


def listeners(ss_output: str) -> list[tuple[str, int]]:
    found = []
    for line in ss_output.splitlines()[1:]:
        if len(line.split()) < 4:
            continue
        host, _, port = line.split()[3].rpartition(":")
        found.append((host.strip("[]"), int(port)))
    return found
