"""Minimal reproducer (vLLM only): a realtime session's step time grows with its length.

Feeds SECONDS of synthetic audio to Voxtral Realtime through the same calls vLLM's /v1/realtime
server makes, as fast as the engine takes it, and prints the mean time between consecutive
output tokens per 1,000 tokens of session position, plus the engine-core process's RSS.
Dummy weights are enough: the cost is host-side bookkeeping, not the model.

usage: python repro_step_growth.py [MODEL (default mistralai/Voxtral-Mini-4B-Realtime-2602)]
           [SECONDS (default 320)] [--eager]
"""

import asyncio
import sys
import time

import numpy as np
import torch
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.protocol import StreamingInput
from vllm.renderers.inputs.preprocess import parse_model_prompt
from vllm.sampling_params import RequestOutputKind, SamplingParams
from vllm.v1.engine.async_llm import AsyncLLM


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(x.split()[1]) // 1024 for x in f if x.startswith("VmRSS:"))


async def main(model, seconds, eager):
    cuda = torch.cuda.is_available()
    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=model, tokenizer_mode="mistral", config_format="mistral", load_format="dummy",
        max_model_len=8192, max_num_seqs=1, limit_mm_per_prompt={"audio": 1},
        dtype="bfloat16" if cuda else "float32", enforce_eager=eager,
        compilation_config={"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1]},
        kv_cache_memory_bytes=(6 if cuda else 1) * 2**30, mm_processor_cache_gb=0))
    from vllm.model_executor.model_loader import get_model_cls

    core_pid = engine.engine_core.resources.engine_manager.processes[0].pid
    model_cls = get_model_cls(engine.model_config)
    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * 16000)) / 16000
    audio = (0.1 * np.sin(2 * np.pi * 180 * t) * (np.sin(2 * np.pi * 3 * t) > 0)
             + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    feedback = asyncio.Queue()

    async def chunks():
        for i in range(0, audio.size, 1280):
            yield audio[i:i + 1280]

    async def inputs():
        async for p in model_cls.buffer_realtime_audio(chunks(), feedback, engine.model_config):
            (ei,) = await engine.renderer.render_cmpl_async([parse_model_prompt(engine.model_config, p)])
            yield StreamingInput(prompt=ei)

    params = SamplingParams(temperature=0.0, max_tokens=model_cls.realtime_max_tokens,
                            output_kind=RequestOutputKind.DELTA)
    stamps = []
    async for out in engine.generate(prompt=inputs(), sampling_params=params, request_id="repro"):
        ids = list(out.outputs[0].token_ids)
        feedback.put_nowait(ids)
        stamps += [time.perf_counter()] * len(ids)
        if len(stamps) % 1000 < len(ids):
            print(f"{len(stamps):5d} tokens: engine-core RSS {rss_mib(core_pid)} MiB", flush=True)
        if out.finished:
            break
    engine.shutdown()
    gaps = np.diff(stamps) * 1000
    for k in range(0, gaps.size - 100, 1000):
        print(f"tokens {k + 1:5d}-{min(k + 1000, gaps.size):5d}: mean step {gaps[k:k + 1000].mean():6.2f} ms")


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--eager"]
    asyncio.run(main(argv[0] if argv else "mistralai/Voxtral-Mini-4B-Realtime-2602",
                     float(argv[1]) if len(argv) > 1 else 320.0, "--eager" in sys.argv))
