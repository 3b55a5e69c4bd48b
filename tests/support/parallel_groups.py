"""Which tests share a worker when the suite runs on several (pytest-xdist, ``scripts/test.sh``):
a pytest plugin, loaded by tests/conftest.py.

- The modules with tests of the session engine run on one worker, so it starts once
  (``SESSION_ENGINE_MODULES``); vLLM's reference tokens are shared by all workers
  (support/shared_reference.py).
- The tests/install modules that share its checkout copy and wheel (session fixtures) run on one
  worker; its doctor and launcher modules, which use neither, on any.
- The modules that use the shared ``voxcap serve`` (support/shared_serve.py) run on one worker,
  so it starts once (``SHARED_SERVE_MODULES``).
- The tests marked ``quiet`` (support/quiet_tests.py: each runs while the other workers run
  none) are one group, started last (``QUIET_TESTS``): earlier, each waited for the others'
  tests of the moment to end and held them up while it ran (~250 s of idle workers a run).
- Every other module runs whole on one worker (its module fixtures are made once).

The grouping is a scheduler of our own (xdist's ``--dist loadgroup`` marks do nothing with pytest
9.2: it renames ``item._nodeid``, which pytest no longer reads). The scheduler runs where nothing
is collected, so the engine modules are listed here; each worker checks the list against the
tests' fixtures, and the tests of a module missing from it fail saying so.
"""

from __future__ import annotations

import pytest

from support.shared_serve import SHARED_SERVE_MODULES

# tests that use the session engine (tests/conftest.py's ``engine``) run where it is; vLLM's
# reference tokens are computed once per run for every worker (support/shared_reference.py)
SESSION_ENGINE_FIXTURES = {"engine", "engine_events"}

# tests/install modules that use none of its shared fixtures (checkout, wheel, installed)
INSTALL_ON_THEIR_OWN = {"tests/install/test_install_doctor.py", "tests/install/test_install_launcher.py"}

SESSION_ENGINE_MODULES = {
    "tests/app/test_controller_no_cuda.py",
    "tests/app/test_controller_pause.py",
    "tests/app/test_controller_rollover.py",
    "tests/app/test_controller_watchdog.py",
    "tests/captions/test_captions_end_to_end.py",
    "tests/captions/test_captions_live_journal.py",
    "tests/engine/vllm_adapter/test_audio_frontend.py",
    "tests/engine/vllm_adapter/test_engine_dies_with_app.py",
    "tests/engine/inprocess/test_engine_streaming.py",
    "tests/engine/sizing/test_memory.py",
    "tests/engine/vllm_adapter/test_parity.py",
    "tests/share/test_share_engine.py",
}


# the tests marked quiet (test functions; every parameter set of each)
QUIET_TESTS = {
    "tests/capture/test_echo_cancel.py::test_echo_removed_near_talker_kept",
    "tests/capture/test_echo_cancel.py::test_both_with_an_app_keeps_its_sound_and_cancels_its_echo",
    "tests/commands/test_live.py::test_live_both_sources_for_a_duration",
    "tests/commands/test_live.py::test_live_survives_a_server_restart_and_flushes_on_ctrl_c",
}


def uses_session_engine(item) -> bool:
    """Whether ``item`` uses conftest's session engine (a module may have an ``engine`` of its
    own, as test_remote_engine.py's server engine)."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for name in SESSION_ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())):
        chain = defs.get(name) or ()
        if chain and chain[-1].func.__module__ == "conftest":
            return True
    return False


def group_of(nodeid: str) -> str:
    if nodeid.split("[", 1)[0] in QUIET_TESTS:
        return "quiet"
    module = nodeid.split("::", 1)[0]
    if module in SESSION_ENGINE_MODULES:
        return "session-engine"
    if module.startswith("tests/install/") and module not in INSTALL_ON_THEIR_OWN:
        return "install"
    if module in SHARED_SERVE_MODULES:
        return "shared-serve"
    return module


# Seconds each slow group took in a parallel run (a clean clone's junit XML, this 2-core machine,
# two runs). The longest start first, so the last group to finish is a short one (seen by test
# count: gui_real_engine's 2 tests, 160 s, ran last while the other worker idled). Any other
# group: 1 s per test.
SECONDS = {
    "session-engine": 450,  # 820 with the three modules below, before the shared references
    "install": 330,
    "tests/install/test_install_doctor.py": 90,  # doctor --selftest, ~45 doctor runs
    "tests/commands/test_transcribe_and_bench.py": 220,
    "tests/engine/inprocess/test_engine_lifecycle.py": 60,
    "tests/engine/inprocess/test_prepare.py": 190,
    "tests/engine/vllm_adapter/test_vllm_patches.py": 150,
    "tests/engine/test_rollover.py": 145,
    "tests/gui/test_gui_real_engine.py": 125,
    "tests/commands/test_live.py": 100,
    "tests/capture/test_echo_cancel.py": 85,
    "tests/capture/test_app_sources.py": 60,
    "tests/engine/inprocess/test_engine_start_failures.py": 45,
    "tests/engine/server/test_serve_gpus.py": 65,  # 57-64 s in single runs on this shared machine
    # five modules, five `voxcap serve` starts (one shared, the kill test's restart, one after
    # the first test that stops it, test_serve_hostile's SIGHUP server, the carry-off server)
    "shared-serve": 450,
    "tests/share/test_share_hostile.py": 50,  # 93 quick cases + load: 45 s alone
    "quiet": 0,  # last: when it waits, the others have no tests left to hold up
}


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """xdist's per-scope scheduling, our groups as the scopes, the longest first."""

        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first call: the whole queue is there, nothing sent yet
                self.ordered = True
                units = sorted(self.workqueue.items(),
                               key=lambda unit: -SECONDS.get(unit[0], len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)


STALE = pytest.StashKey[str]()


def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):  # only where xdist's workers collect
        return
    using = {item.nodeid.split("::", 1)[0] for item in items if uses_session_engine(item)}
    serving = {item.nodeid.split("::", 1)[0] for item in items
               if "shared_serve" in getattr(item, "fixturenames", ())}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("quiet") and group_of(item.nodeid) != "quiet":
            item.stash[STALE] = (
                f"{item.nodeid.split('[', 1)[0]} is marked quiet: add it to QUIET_TESTS in "
                "tests/support/parallel_groups.py (else it holds the other workers up mid-run)")
        elif module in using - SESSION_ENGINE_MODULES:
            item.stash[STALE] = (
                f"{module} uses the session engine: add it to "
                "SESSION_ENGINE_MODULES in tests/support/parallel_groups.py (else each worker "
                "starts its own)")
        elif module in serving - SHARED_SERVE_MODULES:
            item.stash[STALE] = (
                f"{module} uses the shared `voxcap serve`: add it to SHARED_SERVE_MODULES in "
                "tests/support/shared_serve.py (else each worker starts its own)")


@pytest.fixture(autouse=True)
def _parallel_group_is_known(request):
    if STALE in request.node.stash:
        pytest.fail(request.node.stash[STALE])
