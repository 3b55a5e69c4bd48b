"""On a computer without an NVIDIA GPU (this one: vLLM's CPU build) Settings says that the graph
mode does not apply there, and its memory estimate is of the computer's memory, not a GPU's."""

from __future__ import annotations

import pytest

from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.engine.vllm_adapter.platform import cuda_here

pytestmark = pytest.mark.skipif(cuda_here(), reason="a CUDA GPU is here")


def test_settings_show_graph_mode_and_gpu_memory_as_not_applicable(qtbot, make_app,
                                                                   tiny_model_dir):
    app = make_app(AppSettings(engine=EngineChoice(model_dir=str(tiny_model_dir), dummy_weights=True)))
    qtbot.waitUntil(lambda: app.settings_control.cuda is False, timeout=10000)
    app.window.act_settings.trigger()
    panel = app.settings_control.dialog.engine_panel
    qtbot.waitUntil(lambda: panel.model_ok is True, timeout=10000)
    assert not panel.graph_mode.isEnabled()
    assert panel.graph_note.isVisible() and "Not applicable on this computer" in \
        panel.graph_note.text()
    auto = panel.kv_note.text()
    assert "GPU memory" not in auto and "this computer's memory" in auto, auto


def test_a_server_engine_shows_no_note(qtbot, make_app):
    app = make_app(AppSettings(engine=EngineChoice(kind="remote", server_url="ws://127.0.0.1:9")))
    qtbot.waitUntil(lambda: app.settings_control.cuda is False, timeout=10000)
    app.window.act_settings.trigger()
    panel = app.settings_control.dialog.engine_panel
    assert not panel.graph_note.isVisible()  # the server's GPU is its own
