"""What `voxcap serve --host 0.0.0.0` listens on, measured with `ss` as a person would: in a
network namespace of its own (the test's: only loopback in it, nothing leaves the machine) where
the box's host name resolves to a network address (10.77.0.1, on its loopback device, through a
hosts file bound over /etc/hosts), as on an office box. vLLM's own ports (gloo: no key) followed
the host name onto that address; they stay on 127.0.0.1, the API alone is on 0.0.0.0, and
voxcap serve's own account of what listens says the same. It says that beyond loopback audio,
captions and the key travel unencrypted, and it drops connections that send nothing within
~10 s (300 of them, opened inside the namespace)."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys

import pytest
from support.office_namespace import hosts_file, in_office, listeners, needs_namespaces
from support.vllm_server import VllmServer

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900), needs_namespaces]

# Inside the namespace: 300 idle sockets to the server; how long until the server closed each.
IDLE = r"""
import socket, sys, time
port = int(sys.argv[1])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
t0 = time.monotonic()
open_ = 0
for s in idle:
    s.settimeout(max(0.1, t0 + 20 - time.monotonic()))
    try:
        if s.recv(1) != b"":
            open_ += 1
    except TimeoutError:
        open_ += 1
print(open_, round(time.monotonic() - t0, 1))
"""


class NamespacedServer(VllmServer):
    def __init__(self, *args, hosts, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hosts = hosts

    def command(self) -> list[str]:
        return in_office(self.hosts, super().command())

    def inside(self, *cmd: str, timeout: float = 60) -> str:
        return subprocess.run(["nsenter", "-t", str(self.proc.pid), "-n", *cmd], check=True,
                              capture_output=True, text=True, timeout=timeout).stdout


def test_vllms_own_ports_stay_on_loopback_whatever_the_host_name(tiny_weights_dir, tmp_path):
    hosts = hosts_file(tmp_path)
    with NamespacedServer(tiny_weights_dir, max_model_len=512, hosts=hosts,
                          serve_args=["--host", "0.0.0.0"],
                          log_path=tmp_path / "serve.log") as srv:
        found = listeners(srv.inside("ss", "-ltn"))
        out = srv.output()
        idle_open, idle_s = srv.inside(sys.executable, "-c", IDLE, str(srv.port)).split()
    api = [a for a in found if a[1] == srv.port]
    own = [a for a in found if a[1] != srv.port]
    assert api == [("0.0.0.0", srv.port)], found
    assert own, "vLLM's CPU build opens ports of its own (gloo)"
    off_loopback = [a for a in own if not ipaddress.ip_address(a[0]).is_loopback]
    assert off_loopback == [], f"vLLM's own ports beyond loopback: {off_loopback}"
    assert (f"Listening (as measured): 0.0.0.0 port {srv.port} (the API: key required); "
            f"vLLM's own {len(own)} ports: on 127.0.0.1.") in out, out[-3000:]
    assert ("Note: on 0.0.0.0 the audio, the captions and the API key travel unencrypted: beyond "
            "a trusted network put TLS in front (docs/guide/gpu-server.md, \"TLS, and what else "
            "listens\") or use an ssh tunnel.") in out
    assert not re.search(r"Warning: vLLM's own ports", out)
    assert int(idle_open) == 0 and 8 < float(idle_s) < 14, (idle_open, idle_s)
    print(f"\nvoxcap serve in a namespace: {len(own)} vLLM ports on 127.0.0.1; 300 idle sockets "
          f"closed after {idle_s} s")
