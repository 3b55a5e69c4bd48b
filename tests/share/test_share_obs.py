"""Closed captions into a real OBS Studio's stream (Debian's obs-studio under Xvfb, streaming
to an RTMP receiver on loopback): the words arrive in the stream's CEA-608 captions in order,
through obs-websocket with its password; a wrong password, or none where OBS asks for one, sends
nothing, says so with the fix, and is not tried again."""

from __future__ import annotations

import contextlib
import logging
import re
import time

import pytest
from support import obs_studio
from support.browser import wait_for

from voxcap.eventhub import EventHub
from voxcap.share import ShareOptions, Sharing
from voxcap.share.obs import ObsCaptions

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
PASSWORD = "test-password-1"


@pytest.fixture
def obs(tmp_path):
    if not obs_studio.available():
        pytest.skip("needs obs-studio, ffmpeg and Xvfb (scripts/setup-dev.sh)")
    with obs_studio.ObsStudio(tmp_path, password=PASSWORD) as studio:
        yield studio


@contextlib.contextmanager
def streaming(obs, masker=None, **options):
    """Sharing to ``obs`` (as the app and `voxcap live --obs-captions` run it) while OBS streams:
    yields the hub and the sharing, its OBS sender connected; then the last caption into a few
    more frames, and the stream stopped."""
    hub = EventHub()
    sharing = Sharing(hub)
    sharing.apply_now(ShareOptions(obs_url=f"ws://127.0.0.1:{obs.ws_port}", obs_password=PASSWORD,
                                   **options), masker=masker)
    sender = sharing.obs
    try:
        assert obs_studio.request(obs.ws_port, PASSWORD, "StartStream")["requestStatus"]["result"]
        wait_for(lambda: obs_studio.request(obs.ws_port, PASSWORD, "GetStreamStatus")
                 ["responseData"]["outputActive"], timeout=60, what="OBS streaming")
        wait_for(lambda: sender.state == "sending" and not sender.problem, what="connected")
        yield hub, sharing
        time.sleep(1.0)
        obs_studio.request(obs.ws_port, PASSWORD, "StopStream")
        obs.stop_receiver()
    finally:
        sharing.stop()


REFUSED = ("OBS refused the password: use the password OBS shows in Tools → WebSocket Server "
           "Settings → Show Connect Info.")


def test_captions_reach_the_obs_stream(obs, script):
    changes = []
    wrong = ObsCaptions(f"ws://127.0.0.1:{obs.ws_port}", password="nope",
                        on_change=lambda *c: changes.append(c)).start()
    try:
        with streaming(obs) as (hub, sharing):
            sender = sharing.obs
            assert sharing.status().obs.startswith("sending") and not sharing.status().running
            s = script(hub.publish)
            for _ in range(8):
                before = sender.sent
                s.say(3)
                wait_for(lambda b=before: sender.sent > b, timeout=30, what="a caption sent")
    finally:
        wrong.stop()
    text = obs_studio.captions_in(obs.flv)
    found = re.findall(r"w\d+", text)
    assert set(s.words) <= set(found), (s.words, text[:300])
    firsts = sorted(set(found), key=found.index)
    assert firsts == s.words  # each word first appears after the one before it
    assert wrong.sent == 0  # refused: nothing sent ...
    assert (wrong.state, wrong.problem) == ("refused", REFUSED)  # ... the reason and the fix
    assert wrong.attempts == 1  # once in the whole test (the old sender retried after 1, 2, 4 s...)
    assert changes[-1] == ("refused", REFUSED)


def test_a_refused_password_is_said_once_with_its_fix(obs, caplog):
    caplog.set_level(logging.DEBUG)
    url = f"ws://127.0.0.1:{obs.ws_port}"
    hub = EventHub()
    seen = []
    sharing = Sharing(hub, on_obs=lambda state, problem: seen.append((state, problem)))
    try:
        sharing.apply_now(ShareOptions(obs_url=url, obs_password="wrong-password"))
        wait_for(lambda: sharing.status().obs == REFUSED, timeout=30, what="the refusal shown")
        sender = sharing.obs
        time.sleep(4.0)  # the old sender retried after 1, 2, 4 ... s
        assert sender.attempts == 1 and sharing.status().obs == REFUSED
        assert "wrong-password" not in repr(sharing.options) and "wrong-password" not in repr(sender)
        sharing.apply_now(ShareOptions(obs_url=url, obs_password="wrong-password"))  # Apply again
        wait_for(lambda: sharing.obs is not sender and sharing.obs.attempts == 1
                 and sharing.status().obs == REFUSED, timeout=30, what="tried once more")
        sharing.apply_now(ShareOptions(obs_url=url, obs_password=PASSWORD))  # the right one
        wait_for(lambda: sharing.status().obs.startswith("sending"), timeout=30, what="connected")
    finally:
        sharing.stop()
    none = ObsCaptions(url, password="").start()  # OBS asks for one; none is set
    try:
        wait_for(lambda: none.state == "refused", timeout=30, what="no password refused")
        assert none.problem == ("OBS asks for a password and none is set: use the password OBS "
                                "shows in Tools → WebSocket Server Settings → Show Connect Info.")
        assert none.attempts == 1
    finally:
        none.stop()
    assert ("refused", REFUSED) in seen
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "OBS refused the password; not trying again" in logged
    assert "wrong-password" not in logged and PASSWORD not in logged


def test_masked_words_reach_the_obs_stream_masked(obs, script):
    """Mask profanity (the app's setting, `voxcap live --mask-profanity`): OBS's captions carry
    the masked words, as the overlay and the caption page do."""
    from voxcap.captions.masking import make_masker

    with streaming(obs, masker=make_masker(True)) as (hub, sharing):
        sender = sharing.obs
        s = script(hub.publish)
        for round_ in range(6):
            before = sender.sent
            # "fuck", a silent step, "ing": the live way a word is cut (shown before its end)
            for piece in (" oh", " shit", "", " that", " is", " fuck", "", "ing", "", f" w{round_}", ""):
                s.delta(piece)
            wait_for(lambda b=before: sender.sent > b, timeout=30, what="a caption sent")
    text = obs_studio.captions_in(obs.flv)
    # the stars are CEA-608 extended characters, which captions_in leaves out: each masked word
    # is its first letter and no more of its letters
    assert re.search(r"oh ?s[^a-z]+that is ?f[^a-z]+w\d", text), text[:300]
    assert "shit" not in text.lower() and "fuck" not in text.lower(), text[:300]


def test_the_translation_reaches_the_obs_stream_when_picked(obs, script):
    """``ShareSettings.obs_text`` "translation": each line's translation goes to OBS once it has
    come (matched to its line by stream and start time), and none of the original words."""
    from voxcap.events import LineTranslated
    from voxcap.framing import STEP_SECONDS

    translated = []
    with streaming(obs, obs_text="translation") as (hub, sharing):
        sender = sharing.obs
        s = script(hub.publish)
        for n in range(6):
            before = sender.sent
            start = s.index * STEP_SECONDS
            words = s.say(3, pause_every=3)  # a line, then a pause: it has ended
            time.sleep(0.5)  # the original alone sends nothing
            assert sender.sent == before
            english = [f"x{w[1:]}" for w in words]
            translated += english
            hub.publish(LineTranslated(s.stream_id, 500 + n, " ".join(words), start,
                                       start + 0.5, "fr", "en", " ".join(english)))
            wait_for(lambda b=before: sender.sent > b, timeout=30, what="a translation sent")
    text = obs_studio.captions_in(obs.flv)
    found = re.findall(r"x\d+", text)
    assert sorted(set(found), key=found.index) == translated, text[:300]
    assert not re.search(r"w\d", text), text[:300]  # the original words: none
