"""One ``voxcap serve`` for every test module that needs a running server and does not shape its
start (a pytest plugin, loaded by tests/conftest.py).

Each start is a vLLM start (25-35 s here, much of it both cores), so the server of
tests/commands/test_serve_hostile.py, tests/engine/remote/test_capacity_client.py,
tests/engine/remote/test_remote_engine.py, tests/engine/vllm_adapter/test_realtime_carry.py (its
"carry off" server) and tests/gui/test_gui_remote_meter.py is one: the
tiny model's weight files, 512 tokens a session (473 steps, 37.8 s of audio: a session's end is
reachable in a test), up to 4 streams, the API key it generated, and a clip limit of 1 MB
(VLLM_MAX_AUDIO_CLIP_FILESIZE_MB: one append of more than 1,048,576 samples is a genuine server
error event). In a parallel run these modules share a worker (support/parallel_groups.py).

A test that ends the server (a signal) is marked ``stops_shared_serve`` and runs after every
other test of the session; ``shared_serve`` starts the server again when a module finds it gone.
"""

from __future__ import annotations

import pytest

from support.vllm_server import VllmServer

SHARED_SERVE_MODULES = {
    "tests/commands/test_serve_hostile.py",
    "tests/engine/remote/test_capacity_client.py",
    "tests/engine/remote/test_remote_engine.py",
    "tests/engine/vllm_adapter/test_realtime_carry.py",
    "tests/gui/test_gui_remote_meter.py",
}
MAX_MODEL_LEN = 512
CLIP_LIMIT_ENV = {"VLLM_MAX_AUDIO_CLIP_FILESIZE_MB": "1"}
STOPS = "stops_shared_serve"


def pytest_configure(config):
    config.addinivalue_line("markers", f"{STOPS}: ends the shared `voxcap serve` (a signal): runs "
                            "after every other test (tests/support/shared_serve.py)")


def pytest_collection_modifyitems(config, items):
    stoppers = [item for item in items if item.get_closest_marker(STOPS)]
    if stoppers:
        items[:] = [item for item in items if not item.get_closest_marker(STOPS)] + stoppers


@pytest.fixture(scope="session")
def _shared_serve_process(tiny_weights_dir, tmp_path_factory):
    srv = VllmServer(tiny_weights_dir, max_model_len=MAX_MODEL_LEN, env=CLIP_LIMIT_ENV,
                     log_path=tmp_path_factory.mktemp("shared-serve") / "serve.log")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def shared_serve(_shared_serve_process) -> VllmServer:
    """The running shared server (started at a module's first use if it is not running)."""
    srv = _shared_serve_process
    if srv.proc is None or srv.proc.poll() is not None:
        srv.start()
    return srv
