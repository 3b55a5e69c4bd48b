"""The caption page with translated lines, in a real browser (Debian's chromium, headless): the
viewer picks the original, the translation or both with a keyboard-reachable picker kept in the
browser, each text carries its own HTML lang, the screen reader's log says each line once as
picked; and the session's state (F6's "Pausing…", "Paused") is shown. ``VOXCAP_SHOTS=DIR``
keeps screenshots of the three ways to read."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from support.browser import caption_text, open_live, wait_for

from voxcap.events import CaptioningAsked, CaptioningState, LineTranslated
from voxcap.framing import STEP_SECONDS

pytestmark = pytest.mark.timeout(180)
SHOTS = os.environ.get("VOXCAP_SHOTS")
HEARD = [("Bonjour à tous et merci d'être venus ce soir", "Hello everyone and thank you for "
          "coming tonight"),
         ("Nous allons parler du nouveau projet", "We are going to talk about the new project"),
         ("Les questions viendront à la fin", "Questions will come at the end")]
LINES = ("return [...document.querySelectorAll('#captions .line')].map(e => [e.firstChild"
         ".textContent, e.getAttribute('lang'), [...e.querySelectorAll('.tr')].map(t => "
         "[t.textContent, t.getAttribute('lang')])])")
LOG = ("return [...document.querySelectorAll('#log p')].map(p => [p.textContent, "
       "p.getAttribute('lang')])")


def say_line(s, text: str) -> tuple[float, float]:
    """``text`` spoken as one caption line (a pause after it); its audio span."""
    start = s.index * STEP_SECONDS
    for word in text.split():
        s.delta(" " + word)
        s.delta("")
    end = s.index * STEP_SECONDS
    for _ in range(25):  # 2 s without text: the next words start a new line
        s.delta("")
    return start, end


def translated(s, n: int, start: float, end: float) -> LineTranslated:
    """The app's ``LineTranslated`` of the n-th line: its own line number (1000 + n, never the
    feed's), matched by stream and start time."""
    original, english = HEARD[n]
    return LineTranslated(s.stream_id, 1000 + n, original, start, end, "fr", "en", english)


def pick(browser, mode: str) -> None:
    Select(browser.find_element("id", "show")).select_by_value(mode)


def test_the_viewer_picks_original_translation_or_both(browser, make_server, script):
    server = make_server(style={"translation": "both", "lines": 4})  # the app shows both
    s = script(server.post)
    spans = [say_line(s, original) for original, _ in HEARD[:2]]
    server.post(translated(s, 0, *spans[0]))
    browser.get(server.url)
    browser.execute_script("localStorage.clear()")
    browser.get(server.url)
    # the app's choice first: each line, its translation under it, in its own language
    wait_for(lambda: browser.execute_script(LINES) == [
        [HEARD[0][0], "fr", [[HEARD[0][1], "en"]]], [HEARD[1][0], None, []]],
        what="the first line with its translation")
    # the second line's translation comes after it was sent: an update of that line
    server.post(translated(s, 1, *spans[1]))
    both = [[HEARD[0][0], "fr", [[HEARD[0][1], "en"]]], [HEARD[1][0], "fr", [[HEARD[1][1], "en"]]]]
    wait_for(lambda: browser.execute_script(LINES) == both, what="the late translation")
    assert browser.execute_script(
        "return getComputedStyle(document.querySelector('.tr')).fontStyle") == "italic"
    shot(browser, "page-translation-both.png")

    # the picker: reached with the keyboard, named for assistive technology
    browser.find_element("tag name", "body").send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.get_attribute("id") == "show"
    assert focused.accessible_name == "Show"
    assert browser.execute_script("return getComputedStyle(document.getElementById('tools'))"
                                  ".opacity") == "1"  # shown while it has the focus
    focused.send_keys(Keys.END)  # the last choice: the translation alone
    wait_for(lambda: browser.execute_script(LINES) == [
        [HEARD[0][1], "en", []], [HEARD[1][1], "en", []]], what="the translation alone")
    assert browser.execute_script("return localStorage.getItem('voxcap.show')") == "translation"
    shot(browser, "page-translation-only.png")

    pick(browser, "original")
    wait_for(lambda: browser.execute_script(LINES) == [
        [HEARD[0][0], "fr", []], [HEARD[1][0], "fr", []]], what="the original alone")
    shot(browser, "page-translation-original.png")
    browser.get(server.url)  # the choice is kept in this browser, over the app's
    wait_for(lambda: caption_text(browser) == f"{HEARD[0][0]} {HEARD[1][0]}", what="kept")
    assert browser.find_element("id", "show").get_attribute("value") == "original"
    browser.execute_script("localStorage.clear()")


@pytest.mark.parametrize(("mode", "said"), [
    ("original", [[HEARD[2][0], "fr"]]),
    ("translation", [[HEARD[2][1], "en"]]),
    ("both", [[HEARD[2][0], "fr"], [HEARD[2][1], "en"]]),
])
def test_a_screen_reader_hears_each_line_once_as_picked(browser, make_server, script, mode, said):
    server = make_server(style={"translation": mode})
    browser.get(server.url)
    browser.execute_script("localStorage.clear()")
    s = open_live(browser, server.url, lambda: script(server.post))
    span = say_line(s, HEARD[2][0])
    s.finish()  # the line is final: the log waits for its language and translation
    server.post(translated(s, 2, *span))
    wait_for(lambda: browser.execute_script(LOG) == said, what=f"the log ({mode})")
    time.sleep(7.5)  # past every wait: nothing more is said of the line
    assert browser.execute_script(LOG) == said


def test_with_no_translation_in_time_the_original_is_said(browser, make_server, script):
    """The translation alone picked, and none comes (no model for the pair, the worker behind):
    the original is said after 3 s (a line's translation comes within a second), in its language,
    once."""
    server = make_server(style={"translation": "translation"})
    browser.get(server.url)
    browser.execute_script("localStorage.clear()")
    s = open_live(browser, server.url, lambda: script(server.post))
    start, end = say_line(s, HEARD[0][0])
    s.finish()
    server.post(LineTranslated(s.stream_id, 7, HEARD[0][0], start, end, "fr"))  # language only
    t0 = time.monotonic()
    wait_for(lambda: browser.execute_script(LOG) == [[HEARD[0][0], "fr"]], what="the original")
    assert time.monotonic() - t0 > 2.5  # it waited for a translation first
    time.sleep(1.0)
    assert browser.execute_script(LOG) == [[HEARD[0][0], "fr"]]


def test_the_page_shows_the_sessions_state(browser, make_server, script):
    """F6 is said at once ("Pausing…" before the last words are flushed), then "Paused"; a
    page that opens while paused says so; captions coming again hide it."""
    server = make_server()
    s = script(server.post)
    s.say(3)
    browser.get(server.url)
    state = browser.find_element("id", "state")
    wait_for(lambda: caption_text(browser) == "w0 w1 w2", what="captions")
    assert not state.is_displayed()  # captioning: nothing in the way
    assert state.get_attribute("role") == "status"
    server.post(CaptioningAsked("pausing"))
    wait_for(lambda: state.is_displayed() and state.text == "Pausing…", what="Pausing…")
    server.post(CaptioningState("paused", "sess-1"))
    wait_for(lambda: state.text == "Paused", what="Paused")
    browser.get(server.url)  # a page opened now: its snapshot says it
    state = browser.find_element("id", "state")
    wait_for(lambda: state.is_displayed() and state.text == "Paused", what="Paused on a new page")
    shot(browser, "page-paused.png")
    server.post(CaptioningAsked("resuming"))
    wait_for(lambda: state.text == "Resuming…", what="Resuming…")
    server.post(CaptioningState("on", "sess-1"))
    wait_for(lambda: not state.is_displayed(), what="the state hidden again")
    server.post(CaptioningState("paused", "sess-1"))
    browser.get(server.url + "?controls=off")  # a clean OBS Browser Source: no state, no picker
    wait_for(lambda: caption_text(browser) == "w0 w1 w2", what="captions")
    assert not browser.find_element("id", "state").is_displayed()
    assert not browser.find_element("id", "tools").is_displayed()
    # in OBS (its Browser Source gives pages window.obsstudio) that is the default
    obs = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                  {"source": "window.obsstudio = {pluginVersion: '2.0'};"})
    try:
        browser.get(server.url)
        wait_for(lambda: caption_text(browser) == "w0 w1 w2", what="captions in OBS")
        assert not browser.find_element("id", "state").is_displayed()
        browser.get(server.url + "?controls=on")
        wait_for(lambda: browser.find_element("id", "state").text == "Paused", what="asked for")
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", obs)


def shot(browser, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(SHOTS) / name))
