"""The audio of the parity checks and vLLM's own tokens for it (support/reference_tokens.py),
computed once per test run (shared by a parallel run's workers: support/shared_reference.py),
each set in one process of its own without voxcap's plugins.

``reference`` (every run): the default delay (480 ms), eager, for the session engine's checks
(compiled): "speech", the same shifted by 20 ms, and "other". ``reference_continued`` (when a
test asks for it, in the same run): the remote server's session continuation (see CONTINUED_*).
``reference_delays`` (slow tests only): 240 ms for the 44.1 kHz stereo file as voxcap reads it,
960 ms for "speech".
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from support import shared_reference
from voxcap.engine.settings import DEFAULT_MAX_MODEL_LEN

SHIFT_SAMPLES = 320  # 20 ms


def _speech(seconds: float, seed: int) -> np.ndarray:
    from voxcap.commands.bench import speech_like

    return speech_like(seconds, seed=seed)


# A stream longer than one session of the remote tests' server (512 tokens, 39 of them the
# prompt): its first session's text is vLLM's for the whole audio up to token 473; the next
# session is vLLM's for the audio from 473 x 1,280 samples on, as the server decodes it (PCM16).
CONTINUED_SECONDS = 40.0
CONTINUED_AT_TOKEN = 473


def continued_audio() -> np.ndarray:
    return _speech(CONTINUED_SECONDS, 4)


def _as_the_server_hears_it(audio: np.ndarray) -> np.ndarray:
    from voxcap.engine.remote.audio import to_pcm16

    return to_pcm16(audio).astype(np.float32) / 32768.0  # vLLM's realtime connection


PARITY_AUDIO = {
    "speech": lambda: _speech(6.0, 31),
    "speech_shift20": lambda: np.concatenate([np.zeros(SHIFT_SAMPLES, np.float32), _speech(6.0, 31)]),
    "other": lambda: _speech(4.0, 32),
}


@pytest.fixture(scope="session")
def parity_audio():
    return {name: make() for name, make in PARITY_AUDIO.items()}


@pytest.fixture(scope="session")
def stereo_44k_file(tmp_path_factory):
    """4 s of speech-like audio as a 44.1 kHz stereo FLAC (both channels alike)."""
    audio = _speech(4.0, 21)
    t44 = np.interp(np.arange(int(4.0 * 44100)) / 44100, np.arange(audio.size) / 16000, audio)
    path = tmp_path_factory.mktemp("stereo44k") / "talk.flac"
    sf.write(path, np.stack([t44, t44], axis=1), 44100)
    return path


def _job(model, runs, tmp):
    for run in runs:
        for name, audio in list(run["streams"].items()):
            path = tmp / f"{run['name']}-{name}.npy"
            np.save(path, audio)
            run["streams"][name] = str(path)
    # the session engine's length: the default, clamped to the model's own maximum
    params = json.loads((Path(model) / "params.json").read_text())
    length = min(DEFAULT_MAX_MODEL_LEN, params["model_max_length"])
    return {"model": str(model), "max_model_len": length, "runs": runs}


def _checked(out: dict, what: str = "tokens") -> dict:
    # the reference really is vLLM alone: no plugin of its group loaded, no voxcap module imported
    assert out["plugins"] == [] and out["voxcap_imported"] is False, out
    return {run: {name: r[what] for name, r in streams.items()}
            for run, streams in out["tokens"].items()}


REFERENCE_FIXTURES = ("reference", "reference_texts", "reference_continued")


def reference_wanted(session) -> bool:
    """Whether a collected test of this session uses the default-delay reference."""
    return any(wanted(session, name) for name in REFERENCE_FIXTURES)


@pytest.fixture(scope="session")
def reference_started(tiny_weights_dir, parity_audio, tmp_path_factory, request):
    """The default-delay reference, started (the session engine starts it before itself when a
    test will want it: the two starts overlap)."""
    tmp = tmp_path_factory.mktemp("reference")
    streams = dict(parity_audio)
    if wanted(request.session, "reference_continued"):  # same engine: no start of its own
        heard = _as_the_server_hears_it(continued_audio())
        streams["continued"] = heard
        streams["continued_tail"] = heard[CONTINUED_AT_TOKEN * 1280:]
    job = _job(tiny_weights_dir, [{"name": "480", "eager": True, "delay_ms": None,
                                   "streams": streams}], tmp)
    return shared_reference.start(job)


@pytest.fixture(scope="session")
def _reference_480(reference_started):
    return reference_started.result()


@pytest.fixture(scope="session")
def reference(_reference_480):
    """{audio name: vLLM's token ids} at the default delay."""
    return _checked(_reference_480)["480"]


@pytest.fixture(scope="session")
def reference_texts(_reference_480):
    """{audio name: the text vLLM's realtime server streams for it} at the default delay."""
    return _checked(_reference_480, "text")["480"]


@pytest.fixture(scope="session")
def reference_continued(_reference_480):
    """The text pieces (one per token) a server gives for continued_audio() continued in a new
    session at CONTINUED_AT_TOKEN: vLLM's for the whole audio up to there, then vLLM's for
    the rest of the audio in a session of its own."""
    pieces = _checked(_reference_480, "pieces")["480"]
    return pieces["continued"][:CONTINUED_AT_TOKEN] + pieces["continued_tail"]


@pytest.fixture(scope="session")
def reference_delays_started(tiny_weights_dir, parity_audio, stereo_44k_file, tmp_path_factory):
    """The other delays' reference, started (the session engine, and the 960 ms engine of
    test_engine_lifecycle.py, start it before themselves: the starts overlap)."""
    from voxcap.audio_file import read_all

    tmp = tmp_path_factory.mktemp("reference-delays")
    job = _job(tiny_weights_dir, [
        {"name": "240", "eager": True, "delay_ms": 240,
         "streams": {"file44k": read_all(stereo_44k_file)}},  # voxcap's resampler, as transcribe
        {"name": "960", "eager": True, "delay_ms": 960, "streams": {"speech": parity_audio["speech"]}},
    ], tmp)
    return shared_reference.start(job, timeout=1200)


@pytest.fixture(scope="session")
def reference_delays(reference_delays_started):
    return _checked(reference_delays_started.result())


def wanted(session, fixture: str) -> bool:
    """Whether a collected test of this session uses ``fixture``."""
    return any(fixture in getattr(item, "fixturenames", ()) for item in session.items)


def same_share(a: list[int], b: list[int]) -> float:
    """The share of positions where ``a`` and ``b`` agree (over the longer one)."""
    n = max(len(a), len(b), 1)
    return sum(x == y for x, y in zip(a, b, strict=False)) / n
