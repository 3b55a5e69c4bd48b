"""Both front ends show the same notices in the same words: the GUI's notice line and the
terminal front end's stderr (``voxcap live``), fed the same events. Changes of the captioning
state are each front end's own (the status line; the terminal's start and done lines)."""

from __future__ import annotations

from support.gui_fakes import FakeAudio

from voxcap import events as ev
from voxcap.app.notices import NOTICES
from voxcap.captions.journal import JournalStatus
from voxcap.commands import build_parser
from voxcap.commands.flag_words import flag, say_as_flag
from voxcap.commands.terminal_frontend import CaptionRun
from voxcap.gui.settings.setting_words import SPECS, for_the_app
from voxcap.setting_refs import ref

DESC = "Monitor of Built-in Audio"
EVENTS = [  # in the order a run could bring them
    ev.EngineProgress("loading weights", elapsed_s=2.0),
    ev.AppsChanged(()),
    ev.StreamOpened("s1", "Them", DESC),
    ev.CaptureStarted("Them", "alsa.monitor", DESC, 48000, 2, f"Them: capturing '{DESC}'"),
    ev.CaptureLoss("Them", "queue full", 3, 0.06, 0.6, "Them: 0.6 s of audio lost so far"),
    ev.CaptureInterrupted("Them", "stalled", "Them: audio stopped (stalled): reconnecting"),
    ev.CaptureRecovered("Them", "alsa.monitor", DESC, 1.5, f"Them: capturing again from '{DESC}'"),
    ev.CaptureDeviceChanged("Them", DESC, "HDMI", "lost", "Them: the device is gone: now HDMI"),
    ev.StreamInterrupted("s1", "disconnected", "the server went away: reconnecting (audio kept)"),
    ev.StreamGap("s1", 0.5, "server behind", 3.0, 0.5, "0.5 s of audio lost: the server is behind"),
    ev.StreamResumed("s1", 4.0, 2.0, "the server is back (2.0 s of held audio replayed)"),
    ev.StreamFinished("s1", "max_length", 8192, 655.0),
    ev.CaptionWatch("s1", "Them", "missing", 8.0, "Them: speech, but no captions for 8 s"),
    ev.AppProblem("Cannot open the microphone.", "plug one in, or choose System audio", "capture"),
    JournalStatus("sess", False, "The journal cannot be written: the disk is full.",
                  "free some space; captioning goes on"),
    ev.DevicesChanged((), server_up=False),
    ev.SourceSilence("You", "silent", 10.0, "You: no sound from the microphone for 10 s",
                     f"is it muted? Unmute it in the sound settings, or {ref('use_source', 'NAME')}",
                     "microphone muted?"),
    ev.CaptureStopped("Them", 10.0, 3, 0, 0.0, 1, "Them: stopped after 10.0 s of audio (the "
                      "sound was cut off once)"),
]


def in_the_app(line: str) -> str:
    """A terminal notice ("capture: MESSAGE\\n  fix: FIX") as the GUI's notice line shows it."""
    message, _, fix = line.partition("\n  fix: ")
    message = message.split(": ", 1)[1]  # the terminal's topic
    text = message + (f" — {fix}" if fix else "")
    for name in sorted(SPECS, key=lambda n: -len(flag(n))):  # --server-model before --server
        text = text.replace(flag(name), for_the_app(ref(name)))  # each front end names it its way
    text = text.replace(say_as_flag("use_source", "NAME"), for_the_app(ref("use_source", "NAME")))
    return text


def terminal_notices(capsys) -> dict[str, str]:
    run = CaptionRun(build_parser()[0].parse_args(["live", "--no-journal"]), None, FakeAudio(),
                     name="live")
    shown = {}
    try:
        for event in EVENTS:
            capsys.readouterr()
            run._show(event)
            out = capsys.readouterr()
            assert out.out == ""  # captions only on stdout
            if out.err:
                shown[type(event).__name__] = in_the_app(out.err.rstrip("\n"))
    finally:
        assert run.ctl.shutdown().wait(30)
    return shown


def gui_notices(app) -> dict[str, str]:
    shown = {}
    for event in EVENTS:
        app.window.notice.setText("")
        app.on_event(event)
        if app.window.notice.text():
            shown[type(event).__name__] = app.window.notice.text()
    return shown


def test_the_gui_and_the_terminal_show_the_same_notices(qtbot, make_app, capsys):
    app = make_app()
    in_gui, in_terminal = gui_notices(app), terminal_notices(capsys)
    assert in_gui == in_terminal
    assert "CaptureStopped" in in_gui and "DevicesChanged" in in_gui  # each had dropped one
    assert "EngineProgress" not in in_gui and "StreamOpened" not in in_gui
    assert in_gui["StreamGap"] == "Them: 0.5 s of audio lost: the server is behind"
    assert in_gui["SourceSilence"] == ("You: no sound from the microphone for 10 s — is it muted? "
                                       "Unmute it in the sound settings, or choose one in the Source list")


def test_every_kind_of_notice_is_in_this_comparison():
    assert set(NOTICES) <= {type(event) for event in EVENTS}


def test_stale_news_expires_and_a_problem_stays(qtbot, make_app):
    from voxcap.app.notices import notice_for

    recovered = notice_for(EVENTS[6])  # "capturing again": good news, gone after a while
    assert recovered is not None and 0 < recovered.lifetime_s <= 15
    assert notice_for(EVENTS[13]).lifetime_s == 0  # a problem stays until it is solved
    app = make_app()
    app.window.show_notice("Them: capturing again", cause="CaptureRecovered", lifetime_s=0.3)
    assert app.window.notice.text()
    qtbot.waitUntil(lambda: app.window.notice.text() == "", timeout=3000)
