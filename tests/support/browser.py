"""Debian's chromium, headless, driven by Selenium through chromium-driver (nothing downloaded:
both paths are given, so Selenium Manager never runs). Traffic stays on loopback: the name
``rebind.test`` is mapped to 127.0.0.1 inside the browser only (a DNS-rebinding stand-in)."""

from __future__ import annotations

import shutil
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--host-resolver-rules=MAP rebind.test 127.0.0.1")
REBIND_NAME = "rebind.test"


def available() -> bool:
    return bool(shutil.which(CHROMIUM) and shutil.which(DRIVER))


def start_chromium(width: int = 1280, height: int = 800, scale: float = 1.0, mobile: bool = False):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="voxcap-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={width},{height}")
    if scale != 1.0:
        opts.add_argument(f"--force-device-scale-factor={scale}")
    if mobile:
        opts.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": scale},
            "userAgent": "Mozilla/5.0 (Linux; Android 14) Mobile"})
    driver = webdriver.Chrome(options=opts, service=Service(DRIVER))
    driver.set_page_load_timeout(30)
    driver.voxcap_profile = profile
    return driver


def quit_chromium(driver) -> None:
    """Quit the browser and remove its fresh profile folder."""
    try:
        driver.quit()
    finally:
        shutil.rmtree(driver.voxcap_profile, ignore_errors=True)


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    """Poll ``predicate`` until it returns something truthy (returned); a timeout fails with
    ``what`` (an upper bound for a hang, not a speed claim)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def caption_text(driver) -> str:
    """The words the page shows (its visible caption lines, labels included)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#captions .line')].map(e => e.textContent)"
        ".join(' ')")


def open_live(driver, url: str, start_session):
    """Open the caption page at ``url``, then ``start_session()`` (returned) once it is
    connected and wait for that session's snapshot: the words said after come live, not
    refilled from a snapshot (whose lines go to the screen reader's log at once, with what they
    had then)."""
    driver.get(url)
    wait_for(lambda: driver.find_element("id", "status").get_attribute("data-state")
             == "connected", what="the page connected")
    session = start_session()
    wait_for(lambda: driver.execute_script("return window.voxcap.snapshots") >= 2,
             what="the new session's snapshot")
    return session
