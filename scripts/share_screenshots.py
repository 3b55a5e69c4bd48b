"""Screenshots of the caption page (Settings → Share captions) in Debian's chromium, headless.

A ShareServer is fed a scripted two-speaker conversation as the controller's events (the text
is scripted English, not the engine's: the page is what is shown here); then it saves into
``docs/screenshots/``:

- ``share-phone.png``  a phone held upright (390×844 CSS pixels, 2× scale, mobile emulation),
                       the whole session scrolling (``?lines=0``), speaker labels
- ``share-obs.png``    1920×1080 as an OBS Browser Source: the page with a transparent
                       background (``?page=transparent``) composited by the browser over a
                       picture (a drawn game scene), two lines at the bottom as the overlay

    .venv/bin/python scripts/share_screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.browser import caption_text, quit_chromium, start_chromium, wait_for  # noqa: E402

from voxcap.events import CaptioningState, StreamFinished, StreamOpened, TextDelta  # noqa: E402
from voxcap.share.server import ShareServer  # noqa: E402

TALK = [
    ("Them", "Good morning everyone, thanks for joining the weekly planning call."),
    ("Them", "Today we look at the release schedule and the open bugs."),
    ("You", "Morning! I finished the caption server yesterday."),
    ("You", "It works in OBS and on a phone, with a token on the network."),
    ("Them", "Great, can you show us the page after the call?"),
    ("You", "Sure, I will share the address and the QR code."),
]


def feed(server: ShareServer) -> None:
    server.post(CaptioningState("starting", "demo", ("Them", "You")))
    for sid, label in (("s1", "Them"), ("s2", "You")):
        server.post(StreamOpened(sid, label, "demo"))
    server.post(CaptioningState("on", "demo", ("Them", "You")))
    index = {"s1": 0, "s2": 0}
    t = {"s1": 0.0, "s2": 0.0}
    for label, sentence in TALK:
        sid = "s1" if label == "Them" else "s2"
        for other in index:  # the other speaker is silent meanwhile: a pause for it
            t[other] = max(t[other], t[sid])
        for piece in [" " + w for w in sentence.split()] + [""] * 25:
            i = index[sid]
            server.post(TextDelta(sid, piece, (), i, t[sid], t[sid] + 0.08, time.time()))
            index[sid] += 1
            t[sid] += 0.08
    for sid in index:
        server.post(StreamFinished(sid, "flushed", index[sid], t[sid]))


def scene(path: Path) -> None:
    """A picture behind the captions: a drawn game scene (sky, hills, sun, a road)."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1920, 1080))
    d = ImageDraw.Draw(img)
    for y in range(1080):
        k = y / 1080
        d.line([(0, y), (1920, y)], fill=(int(40 + 120 * k), int(110 + 90 * k), int(200 - 40 * k)))
    d.ellipse((1450, 120, 1650, 320), fill=(255, 214, 110))
    d.polygon([(0, 760), (420, 520), (860, 760)], fill=(58, 120, 66))
    d.polygon([(600, 780), (1150, 470), (1920, 800)], fill=(44, 100, 58))
    d.rectangle((0, 760, 1920, 1080), fill=(70, 140, 72))
    d.polygon([(860, 1080), (960, 760), (1000, 760), (1240, 1080)], fill=(90, 90, 96))
    d.rectangle((60, 50, 520, 130), fill=(20, 20, 24))
    d.text((80, 66), "LIVE  ·  speedrun, level 3", fill=(255, 80, 80),
           font=ImageFont.load_default(size=40))
    img.save(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    words = sum(len(s.split()) for _, s in TALK)
    server = ShareServer(port=0).start()
    try:
        feed(server)
        phone = start_chromium(390, 844, scale=2.0, mobile=True)
        try:
            phone.get(server.url + "?lines=0")
            wait_for(lambda: len(caption_text(phone).split()) >= words + 4, what="the talk")
            time.sleep(0.5)
            phone.save_screenshot(str(out / "share-phone.png"))
        finally:
            quit_chromium(phone)
        tmp = Path(tempfile.mkdtemp(prefix="voxcap-obs-"))
        scene(tmp / "scene.png")
        (tmp / "obs.html").write_text(
            "<!DOCTYPE html><style>html,body{margin:0;height:100%;overflow:hidden}"
            "body{background:url(scene.png)}iframe{border:0;width:1920px;height:1080px}"
            f"</style><iframe src='{server.url}?page=transparent'></iframe>")
        obs = start_chromium(1920, 1080)
        try:
            obs.set_window_size(1920, 1080)
            obs.get((tmp / "obs.html").as_uri())
            obs.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False})
            obs.switch_to.frame(0)
            wait_for(lambda: len(caption_text(obs).split()) >= words, what="the talk")
            obs.switch_to.default_content()
            time.sleep(0.5)
            obs.save_screenshot(str(out / "share-obs.png"))
        finally:
            quit_chromium(obs)
    finally:
        server.stop()
    print(f"saved {out / 'share-phone.png'} and {out / 'share-obs.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
