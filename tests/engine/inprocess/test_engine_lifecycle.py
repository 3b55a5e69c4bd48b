"""A second, short-lived engine: a non-default transcription delay (vLLM's own tokens for it), then
its child process killed."""

from __future__ import annotations

import os
import queue
import signal
import time

import pytest
from support.engine_helpers import collect_stream
from support.framing import expected_tokens, first_step_samples, indices_follow, tokens_in
from support.parity_fixtures import same_share

from voxcap.commands.bench import speech_like
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.settings import InProcessSettings
from voxcap.eventhub import EventHub
from voxcap.events import EngineFailed, StreamFinished, TextDelta

pytestmark = [pytest.mark.engine, pytest.mark.slow]


@pytest.fixture(scope="module")
def delay_engine(tiny_weights_dir, tmp_path_factory, request):
    from support.parity_fixtures import wanted

    if wanted(request.session, "reference_delays"):  # computed while this engine starts
        request.getfixturevalue("reference_delays_started")
    hub = EventHub()
    events = hub.subscribe()
    before = (tiny_weights_dir / "tekken.json").read_bytes()
    eng = LocalEngine(InProcessSettings(str(tiny_weights_dir), max_model_len=2048,
                                     max_streams=1, enforce_eager=True,
                                     delay_ms=960),
                      on_event=hub.publish).start()
    eng.wait_ready(timeout=600)
    yield eng, events
    eng.shutdown()
    assert (tiny_weights_dir / "tekken.json").read_bytes() == before  # user's model untouched


def _drain(events):
    out = []
    while not events.empty():
        out.append(events.get())
    return out


def test_delay_is_applied_through_a_tokenizer_copy(delay_engine):
    eng, events = delay_engine
    assert eng.ready_info.transcription_delay_ms == 960
    assert eng.ready_info.resolved_graph_mode == "NONE"  # enforce_eager
    assert any("enforce_eager" in n for n in eng.ready_info.notes)
    first = first_step_samples(960)  # 16,680 samples = 1,042.5 ms
    audio = speech_like(3.0, seed=11)
    sid = eng.open_stream()
    eng.push_audio(sid, audio[: first - 1])
    time.sleep(1.0)
    assert not [e for e in _drain(events) if isinstance(e, TextDelta)]
    eng.push_audio(sid, audio[first - 1:])
    eng.close_stream(sid)
    deltas, fin = collect_stream(events, sid)
    assert fin.reason == "flushed"
    assert tokens_in(deltas) == expected_tokens(audio.size, delay_ms=960)


def test_delay_960_gives_vllms_tokens(delay_engine, parity_audio, reference_delays, reference):
    """Eager, a 960 ms delay (voxcap's tokenizer copy; the reference's own copy of the folder):
    the tokens are vLLM's own for the same audio, and not those of the default delay (an
    engine that ignored the delay would fail)."""
    eng, events = delay_engine
    audio = parity_audio["speech"]
    sid = eng.open_stream()
    for i in range(0, audio.size, 3000):
        eng.push_audio(sid, audio[i:i + 3000])
    eng.close_stream(sid)
    deltas, _ = collect_stream(events, sid)
    ids = [t for d in deltas for t in d.token_ids]
    assert ids == reference_delays["960"]["speech"]
    assert same_share(ids, reference["speech"]) < 0.5


def test_engine_process_killed_mid_stream(delay_engine):
    """The stream ends with an error event, nothing hangs, text already produced is kept."""
    eng, events = delay_engine
    pids = eng.engine_pids()
    assert pids, "the engine core's process id must be known"
    sid = eng.open_stream()
    audio = speech_like(30.0, seed=12)
    kept = []
    t0 = time.monotonic()
    for i in range(0, audio.size, 1280):
        eng.push_audio(sid, audio[i:i + 1280])
        time.sleep(0.02)
        kept += [e for e in _drain(events) if isinstance(e, TextDelta) and e.stream_id == sid]
        if len(kept) >= 10:
            break
    os.kill(pids[0], signal.SIGKILL)
    for j in range(i + 1280, min(audio.size, i + 1280 * 20), 1280):
        eng.push_audio(sid, audio[j:j + 1280])  # the app goes on pushing: no exception
    got_failed = got_finished = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (got_failed and got_finished):
        try:
            ev = events.get(timeout=1)
        except queue.Empty:
            continue
        if isinstance(ev, EngineFailed):
            got_failed = ev
        elif isinstance(ev, StreamFinished) and ev.stream_id == sid:
            got_finished = ev
        elif isinstance(ev, TextDelta) and ev.stream_id == sid:
            kept.append(ev)
    assert got_finished is not None and got_finished.reason == "error"
    assert got_failed is not None and "died" in got_failed.message and got_failed.fix
    assert time.monotonic() - t0 < 90
    assert tokens_in(kept) >= 10 and indices_follow(kept)
    with pytest.raises(Exception, match="died"):
        eng.open_stream()
    eng.shutdown(timeout=30)  # returns, does not hang


def test_shutdown_leaves_no_dead_paths_in_the_environment(delay_engine):
    """Processes started after an engine stopped (a vLLM server, say) inherit the environment."""
    eng, _ = delay_engine
    eng.shutdown(timeout=60)
    assert not eng._workdir.exists()  # its logging config and stage file are gone...
    for key in ("VLLM_LOGGING_CONFIG_PATH", "VOXCAP_STAGE_FILE"):
        value = os.environ.get(key)  # ...and nothing points there (the session engine may still run)
        assert value is None or not value.startswith(str(eng._workdir)), (key, value)
