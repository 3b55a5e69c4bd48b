"""`voxcap serve` and `voxcap live --share` as processes, under hostile input on loopback.

The real `voxcap serve` (vLLM's server, CPU build, the tiny model's weights) that
support/shared_serve.py starts for the modules needing one: without its
key only GET /health answers (vLLM's own check covers /v1 only; the rest is closed through its
--middleware option), the realtime websocket needs the key, and hostile HTTP (foreign Host,
huge headers, garbage, 300 idle sockets) leaves it serving. `voxcap live --share --share-token`
captions through that server with its remote engine and meets every case of
tests/support/hostile_http.py, with nothing on its terminal. After every other test, SIGTERM stops
the server and everything it started; a server of this module's own is stopped by SIGHUP after
its terminal went away."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest
from support import hostile_http as hh
from support.browser import wait_for
from support.vllm_server import VllmServer, free_port

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900)]
MAX_MODEL_LEN = 512
# paths of vLLM's server (0.32) beyond /v1: each answered anyone before (seen: /metrics,
# /tokenize, /version, /load, /ping, /openapi.json, /docs ... 200 without a key)
PROBES = [("GET", "/metrics"), ("GET", "/version"), ("GET", "/load"), ("GET", "/ping"),
          ("POST", "/ping"), ("POST", "/tokenize"), ("POST", "/detokenize"),
          ("POST", "/invocations"), ("GET", "/openapi.json"), ("GET", "/docs"),
          ("GET", "/redoc"), ("GET", "/kv_event_sources"), ("GET", "/tokenizer_info"),
          ("GET", "/is_sleeping"), ("GET", "/server_info"), ("POST", "/start_profile"),
          ("GET", "/v1/models"), ("POST", "/v1/audio/transcriptions"), ("OPTIONS", "/v1/models"),
          ("OPTIONS", "/metrics"), ("HEAD", "/metrics"), ("GET", "/nothing-here")]


@pytest.fixture(scope="module")
def serve(shared_serve):
    return shared_serve


def _call(srv, method: str, path: str, key: str | None = None, headers: dict | None = None):
    req = urllib.request.Request(f"{srv.http_url}{path}", method=method,
                                 data=b"{}" if method == "POST" else None,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_only_health_answers_without_the_key(serve):
    assert _call(serve, "GET", "/health")[0] == 200
    answered = {f"{m} {p}": _call(serve, m, p)[0] for m, p in PROBES}
    assert {k: v for k, v in answered.items() if v != 401} == {}, answered
    for host in ("evil.test", f"rebind.test:{serve.port}"):  # DNS rebinding: still the key
        assert _call(serve, "GET", "/metrics", headers={"Host": host})[0] == 401
    for wrong in ("wrong", serve.api_key + "x", "é"):
        assert _call(serve, "GET", "/metrics", key=wrong.encode("utf-8").decode("latin-1"))[0] \
            == 401
    key = serve.api_key
    assert _call(serve, "GET", "/v1/models", key=key)[0] == 200
    status, body = _call(serve, "GET", "/metrics", key=key)
    assert status == 200 and b"vllm:" in body
    assert _call(serve, "GET", "/openapi.json", key=key)[0] == 404  # --disable-fastapi-docs
    assert _call(serve, "GET", "/docs", key=key)[0] == 404


def test_the_realtime_websocket_needs_the_key(serve):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    url = f"{serve.url}/v1/realtime"
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, additional_headers=headers, open_timeout=30).close()
        assert refused.value.response.status_code in (401, 403)
    with connect(url, additional_headers={"Authorization": f"Bearer {serve.api_key}"},
                 open_timeout=30) as ws:
        assert ws.recv(timeout=30)  # session.created


def test_forwarded_headers_are_not_believed(serve):
    """A client on 127.0.0.1 saying X-Forwarded-Proto/-For (uvicorn, under vLLM's server,
    believed them from 127.0.0.1 by default): the redirect vLLM's app makes for a trailing
    slash keeps the scheme the client really used."""
    reply = hh.request(hh.Target(serve.port), "/v1/models/", headers={
        "Authorization": f"Bearer {serve.api_key}", "X-Forwarded-Proto": "https",
        "X-Forwarded-For": "203.0.113.66"})
    assert reply.status == 307, (reply.status, reply.body[:200])
    assert reply.headers["location"] == f"http://127.0.0.1:{serve.port}/v1/models"


def test_hostile_http_leaves_the_server_serving(serve):
    target = hh.Target(serve.port)
    for raw in (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(200),
                b"GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 100_000 + b"\r\n\r\n",
                b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"):
        reply = hh.exchange(serve.port, raw)
        assert reply.status in (None, 400, 401, 413, 431), reply.status
    idle = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(300)]
    try:
        t0 = time.monotonic()
        assert _call(serve, "GET", "/v1/models", key=serve.api_key)[0] == 200
        took = time.monotonic() - t0
        assert took < hh.PAGE_WITHIN_S, took  # not locked out (see PAGE_WITHIN_S)
    finally:
        for s in idle:
            s.close()
    assert hh.request(target, "/health").status == 200
    print(f"\nvoxcap serve: /v1/models in {took * 1000:.0f} ms with 300 idle sockets open")


def _live_env(serve, tmp_path, pulse) -> dict:
    return {**pulse.env(), "VOXCAP_DATA_DIR": str(tmp_path / "data"),
            "VOXCAP_CONFIG_DIR": str(tmp_path / "config"),
            "VOXCAP_STATE_DIR": str(tmp_path / "state"),
            "PYTHONPATH": os.pathsep.join(sys.path)}


def test_live_share_meets_every_hostile_case(serve, pulse, tmp_path):
    """`voxcap live --share PORT --share-token` (its remote engine through the module's
    server): every case, each followed by the page within 3 s and the feed's snapshot, then
    300 idle sockets with the page still within 3 s; its terminal shows no traceback and no
    line of uvicorn's (a flood of bad requests printed them there before), and Ctrl-C ends it."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voxcap.cli", "live", "--share", str(port), "--share-token",
         "--engine", "remote", "--server", serve.url, "--api-key-file", str(serve.key_file),
         "--source", "system"],
        env=_live_env(serve, tmp_path, pulse), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        wait_for(lambda: any("share: captions at" in ln for ln in err) or proc.poll() is not None,
                 timeout=120, what="the share line")
        (line,) = [ln for ln in err if "share: captions at" in ln]
        token = re.search(r"\?token=([\w-]+)", line).group(1)
        assert "(the address carries its access token)" in line
        target = hh.Target(port, token)
        wait_for(lambda: any("engine: ready" in ln for ln in err), timeout=120,
                 what="the remote engine ready")
        for case in hh.CASES:
            case(target)
            hh.serves_well(target)
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        try:
            pages = [hh.serves_well(target) for _ in range(5)]
        finally:
            for s in idle:
                s.close()
        fds = psutil.Process(proc.pid).num_fds()
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        reader.join(10)
    text = "".join(err)
    assert proc.returncode == 0, text[-2000:]
    for bad in ("Traceback", "Invalid HTTP", "WebSocket library", "Unsupported upgrade",
                "Exception in ASGI", "WARNING", "ERROR"):
        assert bad not in text, (bad, text[-2000:])
    assert text.count(token) == 1  # in the address it printed for the person, nowhere else
    print(f"\nvoxcap live --share: {len(hh.CASES)} cases; page in {max(pages) * 1000:.0f} ms at "
          f"most with 300 idle sockets; the process held {fds} file descriptors")


def _gone(procs: list[psutil.Process], timeout: float = 30.0) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    return alive


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.stops_shared_serve
def test_sigterm_stops_the_server_and_all_it_started(serve):
    """After every other test: `kill PID` (SIGTERM) of `voxcap serve` stops vLLM's server (and its
    engine core) cleanly and frees the port."""
    children = serve.descendants()
    assert children, "vLLM's server is running"
    os.kill(serve.proc.pid, signal.SIGTERM)
    assert serve.proc.wait(120) == 0
    assert not _gone(children), [p.pid for p in children if p.is_running()]
    out = serve.output()
    assert "Stopping vLLM's server" in out and "vLLM's server stopped (exit code" in out
    assert "Traceback" not in out
    assert _port_free(serve.port)


def test_sighup_with_the_terminal_gone_stops_everything(tiny_model_dir, tmp_path):
    """A terminal closed under `voxcap serve` (its writes now fail, then SIGHUP): the server
    and everything it started still stop, and the port is freed."""
    srv = VllmServer(tiny_model_dir, max_model_len=MAX_MODEL_LEN, max_streams=1,
                     log_path=tmp_path / "serve.log")
    env = dict(os.environ, VOXCAP_CONFIG_DIR=str(srv.home / "config"),
               VOXCAP_STATE_DIR=str(srv.home / "state"), VLLM_CPU_OMP_THREADS_BIND="nobind",
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    env.pop("VLLM_API_KEY", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(srv.command(), stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=env, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 600
        while b"Ctrl-C stops the server." not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen[-2000:]
            with contextlib.suppress(OSError):
                seen += os.read(master, 65536)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children
        os.close(master)  # the terminal is gone: writes to it fail from now on
        master = None
        os.kill(proc.pid, signal.SIGHUP)
        assert proc.wait(120) == 0
        assert not _gone(children), [p.pid for p in children if p.is_running()]
        assert _port_free(srv.port)
    finally:
        if master is not None:
            os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
