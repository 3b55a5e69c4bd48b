"""The bare vLLM streaming loop (what vLLM's own /v1/realtime server does), no voxcap code.

Usage: python -m benchmarks.bare_vllm_loop AUDIO_16K_MONO.wav MODEL_DIR [--eager]
Prints one JSON line: start_s (engine start), stream_s (first chunk -> last token), tokens.
"""

import argparse
import asyncio
import json
import time

import soundfile as sf

from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES


async def main(path, model, eager):
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.engine.protocol import StreamingInput
    from vllm.renderers.inputs.preprocess import parse_model_prompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine.async_llm import AsyncLLM

    audio, rate = sf.read(path, dtype="float32")
    assert rate == SAMPLE_RATE and audio.ndim == 1
    t0 = time.perf_counter()
    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=model, tokenizer_mode="mistral", config_format="mistral", load_format="dummy",
        max_model_len=8192, max_num_seqs=1, limit_mm_per_prompt={"audio": 1}, dtype="float32",
        compilation_config={"cudagraph_mode": "FULL_DECODE_ONLY"}, enforce_eager=eager,
        kv_cache_memory_bytes=256 * 2**20))
    start_s = time.perf_counter() - t0
    from vllm.model_executor.model_loader import get_model_cls

    model_cls = get_model_cls(engine.model_config)
    tokens_q = asyncio.Queue()

    async def chunks():
        for i in range(0, audio.size, STEP_SAMPLES):
            yield audio[i:i + STEP_SAMPLES]

    async def inputs():
        async for p in model_cls.buffer_realtime_audio(chunks(), tokens_q, engine.model_config):
            (ei,) = await engine.renderer.render_cmpl_async([parse_model_prompt(engine.model_config, p)])
            yield StreamingInput(prompt=ei)

    t1 = time.perf_counter()
    n = 0
    async for out in engine.generate(prompt=inputs(), sampling_params=SamplingParams(
            temperature=0.0, max_tokens=1, output_kind=RequestOutputKind.DELTA), request_id="bare"):
        tokens_q.put_nowait(list(out.outputs[0].token_ids))
        n += len(out.outputs[0].token_ids)
        if out.finished:
            break
    stream_s = time.perf_counter() - t1
    engine.shutdown()
    print(json.dumps({"start_s": start_s, "stream_s": stream_s, "tokens": n}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("audio", help="a 16 kHz mono WAV")
    ap.add_argument("model", help="model folder")
    ap.add_argument("--eager", action="store_true", help="no CUDA graphs or compilation")
    args = ap.parse_args()
    asyncio.run(main(args.audio, args.model, args.eager))
