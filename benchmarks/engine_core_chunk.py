"""The engine core's per-chunk request work for a realtime session, stage by stage, on vLLM
0.32.0's own classes and no engine: what every 80 ms chunk of every session costs the engine
core's host CPU before the model runs, the part the CPU build and the GPU build share.

A realtime chunk (one prompt token and one 2,160-sample audio item, greedy, one output token,
as vLLM's /v1/realtime sends it) goes through, in the engine core:

* ``decode``: the input socket thread's msgpack decode of the EngineCoreRequest
  (``MsgpackDecoder``); split into ``decode: no audio`` (the same request with no multimodal
  item: request, prompt, sampling parameters with their ``__post_init__`` checks) and
  ``decode: tensor`` (the audio tensor alone, ``_decode_tensor``);
* ``request``: ``Request.from_engine_core_request`` (``EngineCore.preprocess_add_request``);
* ``session update``: ``StreamingUpdate.from_request`` and ``Scheduler._update_request_as_session``
  on a session of ``--tokens`` tokens (the scheduler's own method on a stand-in ``self``);
* ``new request data``: ``NewRequestData.from_request``, the copy sent to the model runner when
  the session is scheduled again as a new request.

Each figure is the best mean over 5 rounds of ``--calls`` calls (µs per chunk; the best, since
this machine is shared); a stream-step costs their sum, so at N sessions one core spends
N x 12.5 x sum per second on them (printed for the --sessions given). Not measured here: the
model runner's removal and re-adding of the session (V1 runner on the CPU build, V2 on the GPU:
benchmarks/capacity.py --profile shows it in a running server) and the scheduler's waiting-queue
pass.

    python -m benchmarks.engine_core_chunk [--calls 5000] [--tokens 200] [--sessions 64,128]
        [--out JSON]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from voxcap.framing import TOKENS_PER_SECOND

STEADY = 2160  # samples of every realtime chunk after a session's first (80 ms + look-back/ahead)


def chunk_request(with_audio: bool = True, request_id: str = "rt-1"):
    """An EngineCoreRequest as vLLM's realtime path sends one chunk: a prompt token, one audio
    item (the model's ``audio_arrays`` batched field), greedy sampling of one DELTA token."""
    import torch
    from vllm.multimodal.inputs import (
        MultiModalBatchedField,
        MultiModalFeatureSpec,
        MultiModalFieldElem,
        MultiModalKwargsItem,
        PlaceholderRange,
    )
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine import EngineCoreRequest

    features = None
    if with_audio:
        audio = torch.from_numpy(np.random.default_rng(0).random(STEADY, dtype=np.float32))
        item = MultiModalKwargsItem({"audio_arrays": MultiModalFieldElem(
            data=audio, field=MultiModalBatchedField())})
        features = [MultiModalFeatureSpec(data=item, modality="audio",
                                          identifier=f"{request_id}-audio-17",
                                          mm_position=PlaceholderRange(offset=0, length=1))]
    params = SamplingParams.from_optional(temperature=0.0, max_tokens=1,
                                          output_kind=RequestOutputKind.DELTA, skip_clone=True)
    return EngineCoreRequest(request_id=request_id, prompt_token_ids=[32], mm_features=features,
                             sampling_params=params, pooling_params=None,
                             arrival_time=time.time(), lora_request=None, cache_salt=None,
                             data_parallel_rank=None, resumable=True, external_req_id="rt")


def best_us(fn, calls: int, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def resident_session(tokens: int):
    """A session of ``tokens`` tokens as the scheduler holds it after a step: all computed but
    the token just sampled, no audio items left (voxcap's session fix keeps ~2)."""
    from vllm.sampling_params import SamplingParams
    from vllm.v1.request import Request

    session = Request(request_id="rt-1", prompt_token_ids=list(range(tokens)),
                      sampling_params=SamplingParams(max_tokens=1), pooling_params=None,
                      mm_features=[], resumable=True)
    return session


def measure(calls: int, tokens: int) -> dict[str, float]:
    from vllm.v1.core.sched.output import NewRequestData
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.request import Request, RequestStatus, StreamingUpdate
    from vllm.v1.serial_utils import MsgpackDecoder, MsgpackEncoder

    encoder, decoder = MsgpackEncoder(), MsgpackDecoder(chunk_request().__class__)
    frames = [bytearray(f) for f in encoder.encode(chunk_request())]  # writable, as ZMQ frames
    bare = [bytearray(f) for f in encoder.encode(chunk_request(with_audio=False))]
    tensor_spec = ("float32", (STEADY,), 1)
    figures = {"decode": best_us(lambda: decoder.decode(frames), calls),
               "decode: no audio": best_us(lambda: decoder.decode(bare), calls)}
    decoder.aux_buffers = frames
    figures["decode: tensor"] = best_us(lambda: decoder._decode_tensor(tensor_spec), calls)
    decoder.aux_buffers = ()
    decoded = decoder.decode(frames)
    figures["request"] = best_us(lambda: Request.from_engine_core_request(decoded, None), calls)

    # the scheduler's session update, on a session that grows one token a chunk as a real one
    scheduler = SimpleNamespace(hash_block_size=16, num_waiting_for_streaming_input=0,
                                log_stats=False)
    session = resident_session(tokens)
    chunk = Request.from_engine_core_request(decoder.decode(frames), None)

    def session_step() -> None:
        session.num_computed_tokens = session.num_tokens  # the step ran
        session.append_output_token_ids(32)  # and sampled a token
        session.status = RequestStatus.RUNNING
        chunk.mm_features[0].mm_position = chunk.mm_features[0].mm_position.__class__(0, 1)
        update = StreamingUpdate.from_request(chunk)
        Scheduler._update_request_as_session(scheduler, session, update)
        session.mm_features.clear()  # consumed (what the session fix bounds)

    figures["session update"] = best_us(session_step, calls)
    blocks = (list(range(tokens // 16 + 1)),)
    figures["new request data"] = best_us(
        lambda: NewRequestData.from_request(session, blocks), calls)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--tokens", type=int, default=200, help="the session's length in tokens")
    ap.add_argument("--sessions", default="64,128", help="N for the cores-per-second figure")
    ap.add_argument("--out", help="JSON of the figures")
    args = ap.parse_args()
    import vllm

    figures = measure(args.calls, args.tokens)
    total = sum(v for k, v in figures.items() if ":" not in k)
    print(f"vLLM {vllm.__version__}: engine-core request work per realtime chunk "
          f"(µs, best of 5 x {args.calls}; session of {args.tokens} tokens)")
    for name, us in figures.items():
        print(f"  {name:<20} {us:8.2f}")
    print(f"  {'sum':<20} {total:8.2f}  = {total / 1000:.3f} ms of CPU per stream-step")
    for n in (int(x) for x in args.sessions.split(",") if x):
        print(f"  N = {n}: {n * TOKENS_PER_SECOND * total / 1e4:.1f} % of one core")
    if args.out:
        Path(args.out).write_text(json.dumps({"vllm": vllm.__version__, "calls": args.calls,
                                              "tokens": args.tokens, "us_per_chunk": figures,
                                              "sum_us": total}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
