"""The device watch (app/session/device_watch.py), with the fake sound server."""

from __future__ import annotations

from support.gui_fakes import FakeAudio

from voxcap.app.session.device_watch import DeviceWatch
from voxcap.errors import CaptureError
from voxcap.events import AppProblem, DevicesChanged


class NoServer(FakeAudio):
    def watch(self, on_event):
        raise CaptureError("The sound server is not running.", "start PipeWire")


def test_watched_once_and_stopped():
    said = []
    watch = DeviceWatch(said.append)
    watch.start(FakeAudio())
    watch.start(FakeAudio())  # a second ask does not watch twice
    assert [type(e) for e in said] == [DevicesChanged]
    assert watch.watching
    watch.stop()
    assert not watch.watching


def test_a_watch_that_cannot_start_is_said():
    said = []
    watch = DeviceWatch(said.append)
    watch.start(NoServer())
    assert said == [AppProblem("The sound server is not running.", "start PipeWire", "capture")]
    assert not watch.watching
    watch.stop()  # nothing to stop: fine
