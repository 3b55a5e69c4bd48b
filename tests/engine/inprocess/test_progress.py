"""vLLM log parsing for start-up stages and the KV-cache size: real log records, real files;
no vLLM."""

from __future__ import annotations

import logging

import pytest

from voxcap.engine.inprocess.progress import (
    STAGE_ENV,
    StageFileHandler,
    StageTail,
    kv_cache_capacity,
    stage_of,
)


@pytest.mark.parametrize("message,stage", [
    ("Starting to load model /m...", "loading weights"),
    ("[backbone] Loading weights took 1.2 seconds", "loading weights"),
    ("torch.compile takes 12.3 s in total", "compiling"),
    ("Capturing CUDA graphs (decode, FULL): 100%", "capturing graphs"),
    ("GPU KV cache size: 131,072 tokens", "allocating cache"),
    ("init engine (profile, create kv cache, warmup model) took 3.1 seconds", "allocating cache"),
    ("Some unrelated message", None),
])
def test_stage_of_vllm_messages(message, stage):
    assert stage_of(message) == stage


def test_kv_cache_capacity_from_the_log_line():
    lines = [("allocating cache", "GPU KV cache size: 131,072 tokens"),
             ("allocating cache", "KV cache size: 8,192 tokens, Maximum concurrency for 4,096 "
                                  "tokens per request: 2.00x")]
    assert kv_cache_capacity(lines) == (8192, 2.0)
    assert kv_cache_capacity([("compiling", "x")]) is None


def test_handler_and_tail_carry_stages_and_errors_through_a_file(tmp_path, monkeypatch):
    path = tmp_path / "stages.jsonl"
    monkeypatch.setenv(STAGE_ENV, str(path))
    logger = logging.getLogger("test.fake_vllm")
    logger.propagate = False
    handler = StageFileHandler()
    logger.addHandler(handler)
    seen = []
    tail = StageTail(path, lambda stage, detail: seen.append(stage))
    try:
        logger.warning("Starting to load model x")
        logger.warning("nothing to see")
        logger.warning("Capturing CUDA graphs")
        logger.warning("Capturing CUDA graphs again")  # a stage is reported once
        logger.error("CUDA out of memory")
        tail.poll()
    finally:
        logger.removeHandler(handler)
    assert seen == ["loading weights", "capturing graphs"]
    assert tail.errors == ["CUDA out of memory"]
    assert len(tail.lines) == 4
