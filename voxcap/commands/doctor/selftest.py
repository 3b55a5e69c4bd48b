"""``--selftest``: the tiny model through the engine, end to end."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .base import (
    FAIL,
    OK,
    REINSTALL,
    Check,
    Context,
    log,
)


def check_selftest(ctx: Context, args) -> Check:
    """The tiny model through the engine, as `voxcap transcribe --dummy-weights --eager` does."""
    title = "Self-test (tiny model through vLLM)"
    from ...engine.vllm_adapter import platform as engine_platform
    from ...errors import VoxcapError

    build, version = engine_platform.installed_build()
    if build is None:
        return Check("selftest", title, FAIL, "vLLM is not installed", engine_platform.NO_VLLM_FIX)
    try:
        import numpy as np

        from ...engine.inprocess.engine import LocalEngine
        from ...engine.model.tiny import write_tiny_model
        from ...engine.settings import InProcessSettings
        from ...events import EngineFailed, StreamFinished, TextDelta
        from ...framing import SAMPLE_RATE, STEP_SAMPLES
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: the engine does not load", exc_info=True)
        return Check("selftest", title, FAIL, f"the engine cannot be loaded: {exc}", REINSTALL)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="voxcap-selftest-") as tmp:
        model = write_tiny_model(Path(tmp) / "tiny")
        settings = InProcessSettings(str(model), dummy_weights=True, enforce_eager=True,
                                  max_model_len=1024, max_streams=1)
        engine = LocalEngine(settings)
        tokens, text, failure = 0, "", None
        try:
            engine.start()
            ready = engine.wait_ready(timeout=args.selftest_timeout)
            sid = engine.open_stream("selftest")
            rng = np.random.default_rng(0)
            audio = (0.1 * rng.standard_normal(SAMPLE_RATE * 3)).astype(np.float32)
            for i in range(0, audio.size, STEP_SAMPLES):
                engine.push_audio(sid, audio[i:i + STEP_SAMPLES])
            engine.close_stream(sid)
            deadline = time.monotonic() + args.selftest_timeout
            while time.monotonic() < deadline:
                try:
                    event = engine.events.get(timeout=1)
                except Exception:  # noqa: BLE001 - queue.Empty
                    continue
                if isinstance(event, TextDelta) and event.stream_id == sid:
                    tokens += 1
                    text += event.text
                elif isinstance(event, StreamFinished) and event.stream_id == sid:
                    if event.reason == "error":
                        failure = event.message
                    break
                elif isinstance(event, EngineFailed):
                    failure = event.message
                    break
            else:
                failure = f"no end of stream within {args.selftest_timeout:.0f} s"
        except VoxcapError as exc:
            return Check("selftest", title, FAIL, exc.message, exc.fix)
        finally:
            engine.shutdown()
    wall = time.perf_counter() - t0
    details = {"tokens": tokens, "seconds": round(wall, 1), "build": build, "vllm": version,
               "device": ready.device, "graph_mode": ready.resolved_graph_mode,
               "sample": text[:80]}
    if failure or tokens == 0:
        return Check("selftest", title, FAIL, f"the engine started on {ready.device} but "
                     f"{failure or 'returned no tokens'}",
                     "run `voxcap transcribe FILE --model DIR --dummy-weights -v` to see vLLM's "
                     "log", details)
    return Check("selftest", title, OK, f"{tokens} tokens from 3 s of audio on {ready.device} in "
                 f"{wall:.0f} s (engine start included)", "", details)
