"""The caption page in a real browser (Debian's chromium, headless, through Selenium): the words
in order, what a screen reader follows, recovery after a server restart, the token, other
origins and other host names (DNS rebinding) refused. Fed with the controller's event types."""

from __future__ import annotations

import http.server
import threading
import time

import pytest
from support.browser import REBIND_NAME, caption_text, open_live, wait_for
from support.other_user import needs_root, other_user

from voxcap.events import LineTranslated

pytestmark = pytest.mark.timeout(180)


def _words_shown(driver, words):
    return wait_for(lambda: caption_text(driver).split() == words, what=f"{len(words)} words")


def test_page_shows_the_words_in_order_for_people_and_screen_readers(browser, make_server, script):
    server = make_server()
    s = script(server.post)
    s.say(6)
    browser.get(server.url)
    _words_shown(browser, s.words)  # what was said before the page opened: the snapshot
    s.say(30, pause_every=12)  # live, with pauses: several lines
    _words_shown(browser, s.words)
    s.finish()
    assert browser.title == "voxcap — live captions"
    log = browser.find_element("css selector", "[role=log]")
    assert log.get_attribute("aria-live") == "polite"
    assert log.get_attribute("aria-label") == "Live captions"
    # every finished line goes to the log once, whole (not word by word)
    wait_for(lambda: browser.execute_script(
        "return [...document.querySelectorAll('#log p')].map(p => p.textContent).join(' ')")
        .split() == s.words, what="the screen reader's log")
    n_lines = browser.execute_script("return document.querySelectorAll('#captions .line').length")
    assert n_lines == browser.execute_script("return document.querySelectorAll('#log p').length")
    assert n_lines >= 3  # the pauses started new lines
    assert browser.find_element("id", "status").get_attribute("data-state") == "connected"
    assert browser.find_element("id", "captions").get_attribute("aria-hidden") == "true"


def test_each_line_speaks_its_own_language(browser, make_server, script):
    """A line's language (``LineTranslated``, a moment after its words) becomes the HTML lang of
    its caption and of its paragraph in the screen reader's log; one without stays the page's."""
    server = make_server()
    s = open_live(browser, server.url, lambda: script(server.post))
    s.say(4, pause_every=2)  # "w0 w1", then "w2 w3" after a pause
    s.say(2)
    server.post(LineTranslated(s.stream_id, 0, "w0 w1", 0.0, 0.3, "fr"))
    server.post(LineTranslated(s.stream_id, 1, "w2 w3", 2.2, 2.8, "de"))
    s.finish()
    script_langs = ("return [...document.querySelectorAll('%s')]"
                    ".map(e => [e.textContent, e.getAttribute('lang')])")
    wait_for(lambda: browser.execute_script(script_langs % "#log p")
             == [["w0 w1", "fr"], ["w2 w3", "de"], ["w4 w5", None]], what="the log's languages")
    assert browser.execute_script(script_langs % "#captions .line") == [
        ["w0 w1", "fr"], ["w2 w3", "de"], ["w4 w5", None]]
    browser.get(server.url)  # a new page: the snapshot carries the languages
    wait_for(lambda: browser.execute_script(script_langs % "#log p")
             == [["w0 w1", "fr"], ["w2 w3", "de"], ["w4 w5", None]], what="the snapshot's")


def test_style_from_the_app_and_from_the_url(browser, make_server, script):
    style = {"font_size_px": 40, "text_color": "#ffff00", "background_color": "#000080",
             "background_opacity": 0.5, "bold": False, "outline": True, "lines": 3,
             "font_family": ""}
    server = make_server(style=style)
    script(server.post).say(3)
    css = ("return (e => [getComputedStyle(e).color, "
           "getComputedStyle(document.getElementById('band')).backgroundColor, "
           "getComputedStyle(e).fontWeight, getComputedStyle(e).textAlign, "
           "getComputedStyle(document.body).backgroundColor])(document.getElementById('captions'))")
    browser.get(server.url)
    wait_for(lambda: caption_text(browser), what="captions")
    assert browser.execute_script(css)[:3] == ["rgb(255, 255, 0)", "rgba(0, 0, 128, 0.5)", "400"]
    browser.get(server.url + "?color=%2300ff00&bg=transparent&page=transparent&bold=1"
                             "&align=center&size=64&lines=1")
    wait_for(lambda: caption_text(browser), what="captions")
    color, band, weight, align, page = browser.execute_script(css)
    assert (color, band, weight, align) == ("rgb(0, 255, 0)", "rgba(0, 0, 0, 0)", "700", "center")
    assert page == "rgba(0, 0, 0, 0)"  # transparent: an OBS Browser Source shows the scene
    assert browser.execute_script(
        "return getComputedStyle(document.getElementById('band')).fontSize") == "64px"
    browser.get(server.url)
    wait_for(lambda: caption_text(browser), what="captions")
    server.call(server.feed.set_style, {**style, "text_color": "#ff0000"})  # changed in the app
    wait_for(lambda: browser.execute_script(css)[0] == "rgb(255, 0, 0)", what="the new style")


def test_page_recovers_after_a_server_restart_and_fills_in_the_gap(browser, make_server,
                                                                   journalled):
    hub, journal, s = journalled.hub, journalled.journal, journalled.script
    first = make_server(session_source=journal.session)
    hub.subscribe(first.post)
    port = first.port
    s.say(5)
    browser.get(first.url)
    _words_shown(browser, s.words)
    hub.unsubscribe(first.post)
    first.stop()  # the app goes on captioning while nothing serves the page
    wait_for(lambda: browser.find_element("id", "status").get_attribute("data-state")
             == "reconnecting", what="the page noticing")
    s.say(7)  # only in the journal
    second = make_server(port=port, session_source=journal.session)
    hub.subscribe(second.post)
    s.say(4)
    _words_shown(browser, s.words)  # the gap from the journal, then live, in order
    assert browser.execute_script("return window.voxcap.snapshots") >= 2  # reconnected
    assert browser.find_element("id", "status").get_attribute("data-state") == "connected"


def test_lan_sharing_needs_the_token(browser, make_server, script):
    server = make_server(lan=True, bind="127.0.0.1")  # LAN rules, on loopback only
    script(server.post).say(4)
    assert len(server.token) >= 20 and f"?token={server.token}" in server.url
    browser.get(server.local_url("/"))
    wait_for(lambda: caption_text(browser).split() == ["w0", "w1", "w2", "w3"], what="words")
    for url in (f"http://127.0.0.1:{server.port}/", f"http://127.0.0.1:{server.port}/?token=x" +
                server.token[1:]):
        browser.get(url)
        assert "needs its access token" in browser.find_element("tag name", "body").text
    before = server.guard.refused
    browser.get(f"http://127.0.0.1:{server.port}/captions.txt")
    assert "needs its access token" in browser.find_element("tag name", "body").text
    assert server.guard.refused > before


# Another user's program that takes the caption server's port while sharing is down: it answers
# every request with a 200 and prints each request line it gets, for a few seconds.
PORT_TAKER = r"""
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
end = time.monotonic() + 20
while True:
    try:
        s.bind(("127.0.0.1", int(sys.argv[1]))); break
    except OSError:
        assert time.monotonic() < end; time.sleep(0.05)
s.listen()
print("listening", flush=True)
s.settimeout(0.5)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        c, _ = s.accept()
    except TimeoutError:
        continue
    c.settimeout(1)
    try:
        print(c.recv(8192).split(b"\r\n")[0].decode("latin-1"), flush=True)
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n"
                  b"connection: close\r\n\r\nok")
    except OSError:
        pass
    c.close()
"""


@needs_root
def test_the_token_goes_only_to_a_server_that_proves_it_knows_it(browser, make_server, script):
    """While sharing is down another user's program takes the port: the open page keeps trying
    (its /proof, no token) but sends the token nowhere; the real server back, it reconnects."""
    server = make_server(lan=True, bind="127.0.0.1")
    port, token = server.port, server.token
    s = script(server.post)
    s.say(3)
    browser.get(server.local_url("/"))
    _words_shown(browser, s.words)
    server.stop()
    with other_user(PORT_TAKER, str(port), "8", timeout=30) as spy:
        time.sleep(8)
    asked = [line for line in spy.output.splitlines() if line.startswith("GET ")]
    assert asked, "the page did not try to reconnect"
    assert all(token not in line and line.startswith("GET /proof?nonce=") for line in asked), asked
    second = make_server(port=port, lan=True, bind="127.0.0.1", token=token)
    s2 = script(second.post)
    s2.say(2)
    _words_shown(browser, s2.words)


class _OtherSite:
    """A page served from another origin (another loopback port) that tries to read the feed
    and the transcript of ``target`` and reports what it could read."""

    def __init__(self) -> None:
        self.target = ""
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                page = f"""<!DOCTYPE html><title>other</title><script>
                window.results = {{}};
                fetch("{site.target}/captions.txt").then(r => r.text())
                  .then(t => results.txt = "read:" + t, () => results.txt = "blocked");
                const es = new EventSource("{site.target}/events");
                es.onmessage = e => {{ results.sse = "read:" + e.data.slice(0, 20); es.close(); }};
                es.onerror = () => {{ if (!results.sse) results.sse = "blocked"; es.close(); }};
                </script>""".encode()
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def results(self, browser, server):
        self.target = f"http://127.0.0.1:{server.port}"
        browser.get(self.origin + "/")
        return wait_for(lambda: (r := browser.execute_script("return window.results"))
                        and len(r) == 2 and r, what="the other page's attempts")

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def other_site():
    site = _OtherSite()
    yield site
    site.close()


def test_a_page_from_another_origin_cannot_read_the_feed(browser, make_server, script, other_site):
    server = make_server()
    script(server.post).say(3)
    assert other_site.results(browser, server) == {"txt": "blocked", "sse": "blocked"}
    # the same page can read it once the user allows its origin (so the refusal above is CORS)
    allowed = make_server(allow_origin=other_site.origin)
    script(allowed.post).say(3)
    got = other_site.results(browser, allowed)
    assert got["txt"] == "read:w0 w1 w2\n" and got["sse"].startswith('read:{"type":"snapshot')


def test_other_host_names_are_refused_in_the_browser(browser, make_server, script):
    server = make_server()
    script(server.post).say(3)
    before = server.guard.refused
    browser.get(f"http://{REBIND_NAME}:{server.port}/")  # a name that resolves to 127.0.0.1
    assert "wrong Host" in browser.find_element("tag name", "body").text
    assert server.guard.refused > before and server.viewers == 0
    browser.get(f"http://localhost:{server.port}/")
    wait_for(lambda: caption_text(browser).split() == ["w0", "w1", "w2"], what="localhost works")
