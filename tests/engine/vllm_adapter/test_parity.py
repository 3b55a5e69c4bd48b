"""voxcap's engine gives vLLM's own realtime tokens, from the real weight files.

The session engine (compiled, the token carry and the session fix on, voxcap's model view,
load_format "mistral") against vLLM's own realtime plumbing in a process without voxcap's
plugins, eager (support/reference_tokens.py). More of the same comparison runs where engines
already are: tests/engine/inprocess/test_engine_streaming.py (blocks of 777 samples, two concurrent streams
in 80 ms and random blocks), test_engine_lifecycle.py (960 ms delay), the CLI's transcribe
(44.1 kHz stereo, 240 ms delay), the rollover's sessions (test_rollover.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.engine_helpers import collect_stream
from support.framing import expected_tokens
from support.parity_fixtures import same_share

pytestmark = pytest.mark.engine


def test_the_reference_follows_the_audio(engine, reference, parity_audio):
    """What makes a token comparison mean something: a 20 ms shift of the same audio changes most
    tokens (vLLM's dummy weights gave 3 distinct ids in a minute of speech, whatever it heard).
    ``engine`` first: the session engine starts the reference before itself, the starts overlap."""
    ids, shifted = reference["speech"], reference["speech_shift20"]
    assert len(ids) == expected_tokens(parity_audio["speech"].size) and len(set(ids)) >= 20
    assert same_share(ids, shifted) < 0.5, (ids, shifted)
    assert same_share(ids, reference["other"]) < 0.2


def test_the_weight_files_are_what_vllm_loaded(engine, tiny_weights_dir):
    """Not dummy weights: vLLM's Mistral loader read consolidated.safetensors through voxcap's
    model view (a link to the user's file). vLLM raises at start-up for any parameter the file
    did not fill (DefaultModelLoader.track_weights_loading) or any name it does not know (the
    loaders index their parameters by name), so a ready engine has every tensor loaded."""
    cfg = engine._engine.vllm_config
    assert cfg.load_config.load_format == "mistral"
    view = Path(cfg.model_config.model)
    assert view != tiny_weights_dir
    weights = view / "consolidated.safetensors"
    assert weights.is_symlink() and weights.resolve() == (tiny_weights_dir / weights.name).resolve()
    assert cfg.model_config.quantization is None  # the check of every parameter is on


def test_shifted_audio_through_voxcap_differs_as_the_reference_does(engine, engine_events,
                                                                  parity_audio, reference):
    """The comparison can fail: voxcap's tokens for the shifted audio are the reference's for the
    shifted audio, and most of them are not those of the unshifted one."""
    sid = engine.open_stream()
    engine.push_audio(sid, parity_audio["speech_shift20"])
    engine.close_stream(sid)
    deltas, _ = collect_stream(engine_events, sid)
    ids = [t for d in deltas for t in d.token_ids]
    assert ids == reference["speech_shift20"]
    assert same_share(ids, reference["speech"]) < 0.5
