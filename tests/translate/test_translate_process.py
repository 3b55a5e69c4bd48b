"""The translation process (the real tiny CTranslate2 model in a real child process): it runs
below the app's priority while no thread of the app does, it is replaced when it dies and given
up on after ``RESTARTS`` (said once, lines go on untranslated), and it dies with the app, even
when it is stuck."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.tiny_translation import copy_package

from voxcap.translate.process import RESTARTS, TranslationStopped
from voxcap.translate.worker import FinishedLine, LineResult, LineWorker, Translators

FRENCH = "Je pense que nous devrions déplacer la réunion à jeudi après-midi."


@pytest.fixture
def models(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    return tmp_path


def _priorities(pid: int) -> dict[int, tuple[int, int]]:
    """Each thread's scheduling policy and nice."""
    return {int(t.name): (os.sched_getscheduler(int(t.name)),
                          os.getpriority(os.PRIO_PROCESS, int(t.name)))
            for t in Path(f"/proc/{pid}/task").iterdir()}


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True  # a zombie: dead, waiting for its parent to reap it
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def test_translation_runs_in_its_own_process_below_the_captions(models):
    """On a busy CPU the captions go first: every thread of the translation process (the
    model's included) runs only on CPU time nothing else wants (SCHED_IDLE: a caption thread
    waking up takes its core at once), and no thread of the app is lowered (one could hold the
    interpreter lock while the CPU is busy, and the engine's client would wait for it)."""
    seen: list[tuple[int, int]] = []

    def result(r: LineResult) -> None:
        tid = threading.get_native_id()
        seen.append((os.sched_getscheduler(tid), os.getpriority(os.PRIO_PROCESS, tid)))
    translators = Translators(models)
    worker = LineWorker(target="en", translators=translators, on_result=result).start()
    worker.submit(FinishedLine(1, "s1", FRENCH, 0.0, 3.0))
    assert worker.drain(60)
    child = translators.process.pid
    assert child is not None and child != os.getpid()
    theirs, ours, session = _priorities(child), _priorities(os.getpid()), os.getsid(child)
    worker.stop()
    mine = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
    assert mine[0] == os.SCHED_OTHER
    assert seen == [mine]  # the worker's thread: the app's priority
    assert set(ours.values()) == {mine}, ours
    assert len(theirs) >= 2 and {policy for policy, _ in theirs.values()} == {os.SCHED_IDLE}, theirs
    # and in the app's session: a process of its own session gets as much CPU as the app and its
    # engine together (the kernel's autogroups), whatever its priority within it
    assert session == os.getsid(0)
    assert _gone(child, 5)  # stopping the worker ends it


def test_a_translation_process_that_dies_is_replaced_then_given_up_on(models, caplog):
    caplog.set_level(logging.INFO, "voxcap.translate")
    notices: list[str] = []
    results: list[LineResult] = []
    translators = Translators(models)
    worker = LineWorker(target="en", translators=translators, on_result=results.append,
                        on_notice=notices.append).start()
    line_id = 0

    def translate_one() -> LineResult:
        nonlocal line_id
        line_id += 1
        worker.submit(FinishedLine(line_id, "s1", FRENCH, 0.0, 3.0))
        assert worker.drain(60)
        return results[-1]

    first = translate_one().translation
    assert first
    for n in range(RESTARTS + 1):
        pid = translators.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert _gone(pid, 5)
        r = translate_one()
        if n < RESTARTS:  # a fresh process took the line: same text, nothing said
            assert (r.translation, translators.process.pid not in (None, pid)) == (first, True)
            assert notices == []
    assert r.translation == "" and r.language == "fr"  # given up: the line goes on untranslated
    assert translate_one().translation == ""
    with pytest.raises(TranslationStopped):
        translators.get("fr", "en").translate([FRENCH])
    worker.stop()
    assert len(notices) == 1 and "Translation stopped" in notices[0] and "restart voxcap" in notices[0]
    ended = [rec for rec in caplog.records if "translation process" in rec.getMessage()
             and "ended with" in rec.getMessage()]
    assert len(ended) == RESTARTS + 1


APP = """
import sys, time
from pathlib import Path
from voxcap.translate.worker import Translators
translators = Translators(Path(sys.argv[1]))
print(translators.get("fr", "en").translate(["bonjour"])[0] and translators.process.pid, flush=True)
time.sleep(60)
"""


def test_the_translation_process_dies_with_the_app_even_when_stuck(models):
    """The app is killed (SIGKILL: no clean-up runs) while its translation process is stopped
    (SIGSTOP: it reads nothing, so a closed pipe alone would not end it): the kernel ends it."""
    app = subprocess.Popen([sys.executable, "-c", APP, str(models)], stdout=subprocess.PIPE,
                           text=True)
    try:
        child = int(app.stdout.readline())
        os.kill(child, signal.SIGSTOP)
        app.kill()
        app.wait()
        assert _gone(child, 5)
    finally:
        app.kill()
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, UnboundLocalError):
            pass


def test_stopping_the_worker_ends_a_translation_in_flight(models):
    translators = Translators(models)
    worker = LineWorker(target="en", translators=translators, on_result=lambda r: None).start()
    deadline = time.monotonic() + 10
    while translators.process.pid is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child = translators.process.pid
    assert child is not None
    os.kill(child, signal.SIGSTOP)  # the line below never gets its answer
    worker.submit(FinishedLine(1, "s1", FRENCH, 0.0, 3.0))
    time.sleep(0.3)
    t = time.monotonic()
    worker.stop()
    assert time.monotonic() - t < 2.0 and not worker._thread.is_alive()
    assert _gone(child, 5)


def _loaded(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if ": loaded " in r.getMessage()]


def test_the_model_into_the_target_is_loaded_before_the_first_line(models, tiny_package, caplog):
    """The first line of a session waits for no model load (~1 s for OPUS-MT's size): the
    worker's start loads the pairs into the target, when they are few enough to be the ones
    used; with more, none (each takes ~75 MB)."""
    caplog.set_level(logging.INFO, "voxcap.translate")
    worker = LineWorker(target="en", translators=Translators(models), on_result=lambda r: None)
    worker.start()
    deadline = time.monotonic() + 30
    while not _loaded(caplog) and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.stop()
    assert len(_loaded(caplog)) == 1 and "fr_en" in _loaded(caplog)[0]
    caplog.clear()
    for source in ("de", "es"):
        copy_package(tiny_package, models / f"{source}_en", source, "en")
    worker = LineWorker(target="en", translators=Translators(models), on_result=lambda r: None)
    worker.start()
    assert worker.drain(30)
    time.sleep(1.0)
    worker.stop()
    assert _loaded(caplog) == []


def test_a_new_target_s_model_is_loaded_before_its_first_line(models, caplog):
    """Languages only, then a target chosen (Settings, mid-session): the worker's thread loads
    the new target's model at once, so its first line waits for no load either."""
    caplog.set_level(logging.INFO, "voxcap.translate")
    worker = LineWorker(target=None, translators=Translators(models), on_result=lambda r: None)
    worker.start()
    time.sleep(0.5)
    assert _loaded(caplog) == []  # nothing to load for languages only
    worker.retarget("en")
    deadline = time.monotonic() + 30
    while not _loaded(caplog) and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.stop()
    assert len(_loaded(caplog)) == 1 and "fr_en" in _loaded(caplog)[0]


def test_a_model_installed_or_removed_mid_session_is_loaded_or_dropped_at_once(
        tiny_package, tmp_path, caplog):
    """Settings or the first-use offer install a model mid-session: the worker's thread loads it
    at once, before any line. One removed in Settings is dropped from memory and translates no
    more ("Captions from then on are not translated", as its Remove question says): the next
    line is untranslated and the missing pair is told."""
    caplog.set_level(logging.INFO, "voxcap.translate")
    results: list[LineResult] = []
    missing: list[tuple[str, str]] = []
    worker = LineWorker(target="en", translators=Translators(tmp_path), on_result=results.append,
                        on_missing=lambda source, target: missing.append((source, target)))
    worker.start()
    assert worker.drain(30)
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    worker.models_changed()
    deadline = time.monotonic() + 30
    while not _loaded(caplog) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_loaded(caplog)) == 1 and "fr_en" in _loaded(caplog)[0]
    worker.submit(FinishedLine(1, "s", FRENCH, 0.0, 2.0))
    assert worker.drain(30) and results[-1].translation and missing == []
    shutil.rmtree(tmp_path / "fr_en")
    worker.models_changed()
    worker.submit(FinishedLine(2, "s", FRENCH, 2.0, 4.0))
    assert worker.drain(30)
    worker.stop()
    assert results[-1].line.line_id == 2 and results[-1].language == "fr"
    assert results[-1].translation == "" and missing == [("fr", "en")]
    assert any("dropped" in r.getMessage() and "fr_en" in r.getMessage() for r in caplog.records)
