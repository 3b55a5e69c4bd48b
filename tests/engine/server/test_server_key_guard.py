"""``voxcap serve``'s key and what answers without it, without starting vLLM: two first starts
racing for the key file end with one key; the key is asked for on every path but GET /health
(engine/server/guard.py, through vLLM's own --middleware option, read back by vLLM's parser);
the address printed is one another computer can use."""

from __future__ import annotations

import multiprocessing
import os
import stat
import sys

import pytest

from voxcap.engine.server import key as server_key

ROUNDS = 40


def _race(path_root: str, barrier, out) -> None:
    from pathlib import Path

    from voxcap.engine.server.key import ensure_key

    got = []
    for i in range(ROUNDS):
        try:
            barrier.wait(30)  # both at the starting line of each round
            got.append(ensure_key(Path(path_root) / str(i) / "serve-api-key"))
        except Exception as exc:  # noqa: BLE001 - reported to the test
            barrier.abort()
            got.append((f"round {i}: {exc!r}", None))
            break
    out.put((os.getpid(), got))


def test_two_first_starts_racing_end_with_one_key(tmp_path):
    """Two processes create the key file at the same moment, 40 times: each time both come out
    with the same key, exactly one of them made it, and the file holds that key, owner-only."""
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(tmp_path), barrier, out)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120)[1] for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    failed = [r for got in results for r in got if r[1] is None and "Broken" not in r[0]]
    assert not failed, failed
    for i, (a, b) in enumerate(zip(*results, strict=True)):
        path = tmp_path / str(i) / "serve-api-key"
        assert a[0] == b[0] == path.read_text().strip(), i  # one key, the file's
        assert sorted([a[1], b[1]]) == [False, True], i  # one start created it
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in path.parent.iterdir()] == ["serve-api-key"]  # nothing left over


def test_key_file_without_hard_links_falls_back_to_o_excl(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "k" / "serve-api-key"
    key, created = server_key.ensure_key(path)
    assert created and path.read_text() == key + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server_key.ensure_key(path) == (key, False)


# ---------------------------------------------------------------- the key, every path ----
def _app(key: str | None, monkeypatch):
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route, WebSocketRoute

    from voxcap.engine.server.guard import KeyOnEveryPath

    if key is None:
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
    else:
        monkeypatch.setenv("VLLM_API_KEY", key)

    async def ok(request):
        return PlainTextResponse("ok")

    async def ws(websocket):
        await websocket.accept()
        await websocket.send_text("open")
        await websocket.close()
    paths = ["/health", "/metrics", "/tokenize", "/v1/models", "/ping", "/version"]
    app = Starlette(routes=[*(Route(p, ok, methods=["GET", "POST", "OPTIONS"]) for p in paths),
                            WebSocketRoute("/v1/realtime", ws)])
    return KeyOnEveryPath(app)


def test_the_key_is_asked_for_on_every_path_but_health(monkeypatch):
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    client = TestClient(_app("vx-right-key", monkeypatch))
    good = {"Authorization": "Bearer vx-right-key"}
    assert client.get("/health").status_code == 200  # the one open path
    assert client.head("/health").status_code == 200
    assert client.post("/health").status_code == 401
    for path in ("/metrics", "/tokenize", "/v1/models", "/ping", "/version"):
        for method in ("GET", "POST", "OPTIONS"):
            r = client.request(method, path)
            assert (r.status_code, r.json()) == (401, {"error": "Unauthorized"}), (method, path)
        assert client.get(path, headers=good).status_code == 200, path
        for wrong in ("Bearer vx-wrong", "Basic vx-right-key", "Bearer", "vx-right-key",
                      "Bearer vx-right-key-and-more"):
            assert client.get(path, headers={"Authorization": wrong}).status_code == 401
    # any bytes in the header: a plain 401, never an error
    r = client.get("/metrics", headers=[(b"authorization", "Bearer é\xff".encode("latin-1"))])
    assert r.status_code == 401
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/v1/realtime"):
        pass  # refused before it opens
    with client.websocket_connect("/v1/realtime", headers=good) as ws:
        assert ws.receive_text() == "open"
    open_client = TestClient(_app(None, monkeypatch))  # no key set: nothing to check
    assert open_client.get("/metrics").status_code == 200


def test_vllms_parser_reads_the_middleware_and_no_docs(tiny_model_dir):
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    from voxcap.engine.server.args import engine_args_for, server_command
    from voxcap.engine.server.guard import MIDDLEWARE
    from voxcap.engine.settings import InProcessSettings

    settings = InProcessSettings(str(tiny_model_dir), dummy_weights=True, max_streams=2,
                              kv_cache_gib=0.25).validated()
    args, _ = engine_args_for(settings, "cpu")
    cmd = server_command(args, host="127.0.0.1", port=8123, served_name="tiny",
                         extra=["--enable-log-requests"])
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd[3:])
    assert parsed.middleware == [MIDDLEWARE] and parsed.disable_fastapi_docs
    assert cmd[-1] == "--enable-log-requests"  # the person's flags still come last
    module, name = MIDDLEWARE.rsplit(".", 1)  # importable as vLLM imports it
    assert getattr(__import__(module, fromlist=[name]), name).__name__ == "KeyOnEveryPath"
    assert "vllm" not in sys.modules[module].__dict__  # it imports nothing of vLLM


def test_the_printed_address_is_one_another_computer_can_use():
    from voxcap.commands.serve import reachable_host
    from voxcap.netaddr import lan_address

    assert reachable_host("0.0.0.0") == lan_address() == reachable_host("::")
    assert reachable_host("192.168.1.5") == "192.168.1.5"
    assert reachable_host("fe80::1") == "[fe80::1]"  # an IPv6 address in a ws:// URL


# uvicorn serving an app behind the guard, as vLLM's server does (h11 and httptools alike).
UVICORN = r"""
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from voxcap.engine.server.guard import KeyOnEveryPath

async def ok(request):
    return PlainTextResponse("ok")

app = Starlette(routes=[Route("/health", ok)])
app.add_middleware(KeyOnEveryPath)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http=sys.argv[2], log_level="error",
            timeout_keep_alive=5)
"""


@pytest.mark.parametrize("http", ["h11", "httptools"])
def test_connections_that_send_nothing_are_dropped(http):
    """300 sockets that never send a request (another user's, on loopback) are closed by the
    server within ~10 s, while a request still gets its answer; uvicorn alone kept them open."""
    import socket
    import subprocess
    import time
    import urllib.request

    pytest.importorskip(http)
    from support.vllm_server import free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", UVICORN, str(port), http],
                              env={**os.environ, "VLLM_API_KEY": "vx-key"})
    idle: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert r.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, "uvicorn did not start"
                time.sleep(0.2)
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        t0 = time.monotonic()
        for s in idle:
            s.settimeout(max(0.1, t0 + 14 - time.monotonic()))
            try:
                assert s.recv(1) == b""  # closed by the server
            except TimeoutError:
                pytest.fail(f"an idle socket was still open after {time.monotonic() - t0:.0f} s")
        took = time.monotonic() - t0
        assert 8 < took < 14, took
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            assert r.status == 200
    finally:
        for s in idle:
            s.close()
        server.terminate()
        server.wait(10)
