"""GUI tests: Qt's offscreen platform (no X server needed), the scripted engine and fake audio
by default; tests marked ``engine`` drive the real tiny vLLM engine behind the real GUI."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_ACCESSIBILITY", "1")

import pytest
from support.gui_fakes import FakeAudio, scripted_factory

from voxcap.app.controller import SessionController
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice


@pytest.fixture(autouse=True)
def _own_config_dir(monkeypatch, tmp_path):
    """Each test's settings file its own: an app saves on quit, also one a test left behind,
    and the workers of a parallel run would otherwise share one file."""
    monkeypatch.setenv("VOXCAP_CONFIG_DIR", str(tmp_path / "config"))
    # Settings → Translation asks the model index when shown: never the internet from a test
    monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", "http://127.0.0.1:9/index.json")


@pytest.fixture
def fake_audio():
    return FakeAudio()


@pytest.fixture
def make_app(qtbot, tmp_path, fake_audio):
    """``make_app(settings=None, **kw)``: a started VoxcapApp on the scripted engine and fake
    audio, journalling under tmp_path; shut down cleanly at the end of the test."""
    from voxcap.gui.application import VoxcapApp

    apps = []

    def make(settings: AppSettings | None = None, engine_factory=None, **kw):
        if settings is None:
            settings = AppSettings(engine=EngineChoice(model_dir="/tmp/fake-model"))
        factory = engine_factory or scripted_factory()
        app = VoxcapApp(settings, kw.pop("problem", None), controller_factory=lambda publish:
                        SessionController(publish, engine_factory=factory, audio=fake_audio,
                                          journal_root=tmp_path / "sessions"),
                        sessions_root=tmp_path / "sessions", use_tray=False,
                        first_run=kw.pop("first_run", False), **kw)
        qtbot.addWidget(app.window)
        apps.append(app)
        app.start()
        return app

    yield make
    for app in apps:
        app.meter_timer.stop()  # × while captioning asks instead of quitting: no tick after the window
        app.overlay.close()
        done = app.controller.shutdown()
        assert done.wait(180), "controller did not shut down"
