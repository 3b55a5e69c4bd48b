"""Many viewers, slow viewers: 20 at once (19 programs and the page in the browser) all get every
word in order, with the server's CPU and memory reported; a viewer that does not read is
skipped ahead (bounded queue) and never holds up the others; a bound on feeds."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from support.browser import caption_text, wait_for

pytestmark = pytest.mark.timeout(240)
CLIENTS = Path(__file__).parents[1] / "support" / "sse_clients.py"


def test_twenty_viewers_at_once(browser, make_server, script):
    server = make_server()
    s = script(server.post)
    s.say(5)
    browser.get(server.url)
    wait_for(lambda: caption_text(browser).split() == s.words, what="the page")
    me = psutil.Process()
    rss0, cpu0 = me.memory_info().rss, server.cpu_seconds()
    last = "w204"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    clients = subprocess.Popen([sys.executable, str(CLIENTS), server.local_url("/events"), "19",
                                last], stdout=subprocess.PIPE, env=env, text=True)
    try:
        wait_for(lambda: server.viewers == 20, what="20 viewers")
        for _ in range(20):
            s.say(10, pause_every=40)
            time.sleep(0.02)  # about 40x real time: 20 words of speech in 0.02 s
        s.finish()
        out, _ = clients.communicate(timeout=120)
    finally:
        clients.kill()
    results = json.loads(out)
    assert s.words[-1] == last
    # every word, in the order the feed delivered them (not re-sorted by line id), messages in
    # sequence, line ids rising as lines arrived
    assert all(r.get("words") == s.words for r in results), results[0]
    assert all(r["seq_ok"] and r["ids_rise"] for r in results), results[0]
    wait_for(lambda: caption_text(browser).split() == s.words, what="the page, all words")
    cpu, rss = server.cpu_seconds() - cpu0, me.memory_info().rss - rss0
    print(f"\n20 viewers, {len(s.words) - 5} words ({s.index} deltas): server thread CPU "
          f"{cpu:.2f} s, process memory {rss / 2**20:+.1f} MiB")
    assert rss < 64 * 2**20  # bounded queues: memory does not grow with the words


def _stuck_viewer(server) -> socket.socket:
    """A viewer that connects and never reads (a phone gone to sleep)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    return sock


def test_a_viewer_that_does_not_read_skips_and_holds_nothing_up(make_server, script):
    server = make_server(viewer_queue=64)
    s = script(server.post)
    stuck = _stuck_viewer(server)
    try:
        wait_for(lambda: server.viewers == 1, what="the stuck viewer")
        fast = subprocess.Popen([sys.executable, str(CLIENTS), server.local_url("/events"), "1",
                                 "w2999"], stdout=subprocess.PIPE, text=True)
        wait_for(lambda: server.viewers == 2, what="the fast viewer")
        for _ in range(300):  # ~1 MB of messages: more than the stuck socket's buffers hold
            s.say(10, pause_every=50)
            time.sleep(0.005)
        s.finish()
        out, _ = fast.communicate(timeout=120)
        (result,) = json.loads(out)
        assert result["words"] == s.words  # the reader got every word while the other slept
        assert result["seq_ok"] and result["ids_rise"]  # in the order they were said
        (slow,) = [v for v in server.feed.viewers if v.skips]  # the stuck one fell behind ...
        assert len(slow.pending) <= 64  # ... and holds at most its bound
        print(f"\nstuck viewer: skipped ahead {slow.skips} times, holds {len(slow.pending)} "
              f"messages; the reader got {result['snapshots']} snapshot(s)")
    finally:
        stuck.close()
    wait_for(lambda: server.viewers == 0, what="the stuck viewer gone")


def test_a_bound_on_feeds(make_server, script):
    server = make_server(max_viewers=3)
    script(server.post).say(2)
    socks = [_stuck_viewer(server) for _ in range(3)]
    try:
        wait_for(lambda: server.viewers == 3, what="3 viewers")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.local_url("/events"), timeout=30)
        assert refused.value.code == 503 and b"too many viewers" in refused.value.read()
        with urllib.request.urlopen(server.local_url("/captions.txt"), timeout=30) as r:
            assert r.read() == b"w0 w1\n"  # the page and transcripts are still served
    finally:
        for sock in socks:
            sock.close()
    wait_for(lambda: server.viewers == 0, what="the viewers gone")
    with urllib.request.urlopen(server.local_url("/events"), timeout=30) as r:
        assert r.status == 200
