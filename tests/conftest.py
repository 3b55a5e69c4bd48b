"""Shared fixtures: the tiny model (without and with weight files) and ONE real vLLM engine (CPU
build, the tiny model's weight files) per test session.

The engine takes ~40-80 s to start on 2 cores, so every test that needs one shares it;
each test subscribes to the engine's events through ``engine_events`` and filters by the
ids of the streams it opened.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import tempfile

import pytest

from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.engine.settings import InProcessSettings
from voxcap.engine.vllm_adapter.pad_stall import PAD_STALL_ENV
from voxcap.eventhub import EventHub

# A run started under nohup (or a CI runner that ignores SIGHUP) hands "ignored" to every process
# it starts, and voxcap keeps a SIGHUP ignored at its start (the person asked for that): the
# tests of a closed terminal need the default a terminal window gives.
signal.signal(signal.SIGHUP, signal.SIG_DFL)

# Tests never write into the user's real folders (sessions, settings, caches). The workers of one
# parallel run (pytest-xdist: scripts/test.sh) share the cache folder, so vLLM's caches are
# filled once (and the quiet turnstile and shared references work). They inherit the folders
# the controller set here when it loaded this file, so data, settings and state are shared by
# the workers too (no clash seen in the parallel runs); the per-run cache name below is for
# workers started without them. The process that makes the folders removes them when it ends.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
_SHARED_CACHE = os.path.join(tempfile.gettempdir(), f"voxcap-test-cache-{_RUN[:12]}") if _RUN else None
_NAMES = ("DATA", "CONFIG", "CACHE", "STATE")
if not all(os.environ.get(f"VOXCAP_{name}_DIR") for name in _NAMES):
    _TEST_HOME = tempfile.mkdtemp(prefix="voxcap-test-dirs-")
    atexit.register(shutil.rmtree, _TEST_HOME, True)
    for _name in _NAMES:
        _shared = _SHARED_CACHE if _name == "CACHE" else None
        os.environ.setdefault(f"VOXCAP_{_name}_DIR", _shared or os.path.join(_TEST_HOME, _name.lower()))

# The Ctrl-C tests send SIGINT as a terminal would. A suite started in the background of a
# non-interactive shell (`nohup scripts/test.sh &`) inherits SIGINT ignored, and so would every
# process it starts (voxcap respects that, as Python does): undo it here, for the tests' children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Engine tests share CPU with the engine's own processes: keep torch from oversubscribing, and
# keep vLLM's CPU build from pinning every engine's worker to core 0 (its default on 2 cores).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")

# The tiny model says it allows 4096 tokens; the session engine runs on the default length, so
# it proves the default is clamped to the model's maximum.
# the sound-server fixtures (pulse, speech_them, speech_you): one server for the session
# the parity checks' audio and vLLM's own tokens for it (reference, reference_delays)
# which tests share a worker when the suite runs in parallel (scripts/test.sh), and which run alone
# one `voxcap serve` for the modules that need a running server (shared_serve)
pytest_plugins = ["support.pulse_fixtures", "support.parity_fixtures", "support.shared_serve",
                  "support.parallel_groups", "support.quiet_tests"]

SESSION_MAX_MODEL_LEN = 4096
SESSION_MAX_STREAMS = 4
TINY_WEIGHTS_SEED = 0


@pytest.fixture(autouse=True)
def _voxcap_logger_as_it_was():
    """A test that sets up voxcap's logging (logs.setup: own handlers, no propagation) would hide
    the "voxcap" records from later tests' caplog: put the logger back after each test."""
    logger = logging.getLogger("voxcap")
    level, propagate, handlers = logger.level, logger.propagate, list(logger.handlers)
    yield
    for h in list(logger.handlers):
        if h not in handlers:
            logger.removeHandler(h)
            h.close()
    logger.setLevel(level)
    logger.propagate = propagate


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    return write_tiny_model(tmp_path_factory.mktemp("tiny-model"), max_len=SESSION_MAX_MODEL_LEN)


@pytest.fixture(scope="session")
def tiny_weights_dir(tmp_path_factory):
    """The tiny model with real weight files (consolidated.safetensors in the real model's layout,
    random values from seed 0 whose tokens follow the audio): what vLLM loads as it loads the
    real model (load_format "mistral", through voxcap's model view)."""
    return write_tiny_model(tmp_path_factory.mktemp("tiny-weights"), max_len=SESSION_MAX_MODEL_LEN,
                            weights_seed=TINY_WEIGHTS_SEED)


@pytest.fixture(scope="session")
def engine_hub():
    return EventHub()


@pytest.fixture(scope="session")
def engine(tiny_weights_dir, engine_hub, tmp_path_factory, request):
    """The session's engine: production settings (FULL_DECODE_ONLY requested, torch.compile
    on, default session length and KV budget), the tiny model with its weight files loaded as
    a user's are (no --dummy-weights), up to 4 streams."""
    from support.parity_fixtures import reference_wanted, wanted

    if reference_wanted(request.session):  # vLLM's own tokens, computed while this one starts
        request.getfixturevalue("reference_started")
    if wanted(request.session, "reference_delays"):  # the other delays' too: tests/commands
        request.getfixturevalue("reference_delays_started")  # wants them before engine/ runs
    settings = InProcessSettings(str(tiny_weights_dir), max_streams=SESSION_MAX_STREAMS)
    # the test-only stall hook rides in its engine core (inert until a stream asks for it:
    # voxcap/engine/vllm_adapter/pad_stall.py); no other engine gets it
    os.environ[PAD_STALL_ENV] = "1"
    try:
        eng = LocalEngine(settings, on_event=engine_hub.publish).start()
        eng.wait_ready(timeout=600)
    finally:
        os.environ.pop(PAD_STALL_ENV, None)
    yield eng
    eng.shutdown()


@pytest.fixture
def engine_events(engine, engine_hub):
    """A queue receiving every engine event published during this test."""
    q = engine_hub.subscribe()
    yield q
    engine_hub.unsubscribe(q)
