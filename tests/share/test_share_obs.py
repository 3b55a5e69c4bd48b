"""Closed captions into a real OBS Studio's stream (Debian's obs-studio under Xvfb, streaming
to an RTMP receiver on loopback): the words arrive in the stream's CEA-608 captions in order,
through obs-websocket with its password; a wrong password sends nothing and says so."""

from __future__ import annotations

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


def test_captions_reach_the_obs_stream(obs, script):
    wrong = ObsCaptions(f"ws://127.0.0.1:{obs.ws_port}", password="nope").start()
    hub = EventHub()
    sharing = Sharing(hub)  # as the app and `voxcap live --obs-captions` run it
    sharing.apply_now(ShareOptions(obs_url=f"ws://127.0.0.1:{obs.ws_port}", obs_password=PASSWORD))
    sender = sharing.obs
    try:
        assert obs_studio.request(obs.ws_port, PASSWORD, "StartStream")["requestStatus"]["result"]
        wait_for(lambda: obs_studio.request(obs.ws_port, PASSWORD, "GetStreamStatus")
                 ["responseData"]["outputActive"], timeout=60, what="OBS streaming")
        wait_for(lambda: sender.state == "sending" and not sender.problem, what="connected")
        assert sharing.status().obs.startswith("sending") and not sharing.status().running
        s = script(hub.publish)
        for _ in range(8):
            before = sender.sent
            s.say(3)
            wait_for(lambda b=before: sender.sent > b, timeout=30, what="a caption sent")
        time.sleep(1.0)  # the last caption into a few more frames
        obs_studio.request(obs.ws_port, PASSWORD, "StopStream")
        obs.stop_receiver()
    finally:
        sharing.stop()
        wrong.stop()
    text = obs_studio.captions_in(obs.flv)
    found = re.findall(r"w\d+", text)
    assert set(s.words) <= set(found), (s.words, text[:300])
    firsts = sorted(set(found), key=found.index)
    assert firsts == s.words  # each word first appears after the one before it
    assert wrong.sent == 0 and wrong.problem  # refused: nothing sent, a reason shown
