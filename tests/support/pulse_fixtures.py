"""Fixtures (a pytest plugin, loaded by tests/conftest.py): a real PulseAudio server for the whole
test session (see tests/support/pulse.py), reset to its initial devices before each test, and
espeak-ng speech to play into it. Started only by the tests that use it."""

from __future__ import annotations

import pytest

from support.pulse import PulseServer, speech_wav
from support.xcorr import load_16k

SPEECH_THEM = "The quarterly report shows strong growth in every region, and the board is pleased."
SPEECH_YOU = "Could you please repeat the last number? I did not hear it clearly over the noise."


@pytest.fixture(scope="session")
def pulse_server():
    # its own short temp dir (a unix socket path must stay under 108 bytes); removed by stop()
    server = PulseServer().start()  # sets PULSE_SERVER, re-inits PortAudio
    yield server
    server.stop()  # kills it and restores the environment


@pytest.fixture
def pulse(pulse_server):
    """The session's server with all its devices and defaults as at start."""
    pulse_server.reset()
    yield pulse_server


@pytest.fixture(scope="session")
def speech_them(tmp_path_factory):
    """(path, 16 kHz reference samples) of speech for the virtual speaker ("Them")."""
    path = speech_wav(tmp_path_factory.mktemp("speech") / "them.wav", SPEECH_THEM)
    return path, load_16k(path)


@pytest.fixture(scope="session")
def speech_you(tmp_path_factory):
    """Different speech (resampled to 44.1 kHz by sox) for the virtual microphone ("You")."""
    path = speech_wav(tmp_path_factory.mktemp("speech") / "you.wav", SPEECH_YOU, rate=44100)
    return path, load_16k(path)


@pytest.fixture(scope="session")
def pipewire_server():
    from support.pipewire import PipeWireServer

    server = PipeWireServer().start(apply_env=False)
    yield server
    server.stop()


@pytest.fixture(params=["pulseaudio", "pipewire"])
def sound_server(request):
    """Each real server in turn, reset, with this process pointed at it (PulseAudio or PipeWire's
    PulseAudio server)."""
    server = request.getfixturevalue("pulse_server" if request.param == "pulseaudio" else "pipewire_server")
    server.reset()
    server.apply_env()
    yield server
    if request.param == "pipewire":
        server.restore_env()
        from support.pulse import reinit_portaudio

        reinit_portaudio()
