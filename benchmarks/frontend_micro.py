"""Voxtral Realtime's audio front end alone, per step of N sessions: vLLM 0.32.0's per-session
``embed_multimodal`` against voxcap's batched pass (voxcap/engine/vllm_adapter/audio_frontend.py)
and, on CUDA, its CUDA-graph replay, for the same chunks (one 2,160-sample chunk a session).

No engine: vLLM's own front-end modules (mel filters, the two causal convolutions, random
weights) built on their own, at the tiny model's width (64) and the real model's (1,280). The
time is a step's wall time (CUDA synchronised after each step), the mean of --repeats steps after
a warm-up; on the CPU build that is the host cost, the engine core's limit.

  python -m benchmarks.frontend_micro [--sessions 1,2,8,48] [--widths 64,1280] [--repeats 50]
      [--device cpu|cuda] [--dtype float32|bfloat16] [--out JSON]

The tests build the same modules (tests/engine/vllm_adapter/test_audio_frontend.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from voxcap.framing import SAMPLE_RATE, TOKENS_PER_SECOND

STEADY = 2160  # samples of every realtime chunk after a session's first (80 ms + look-back/ahead)
FIRST = 49_960  # a session's first chunk (the prompt prefix's audio)


def front_end(dtype_name: str = "float32", d_model: int = 64, global_max: float | None = 1.5,
              device: str = "cpu"):
    """vLLM's Voxtral Realtime model holding only what embed_multimodal uses: the mel filters,
    the two causal convolutions (random weights, seed 0) and the pool size."""
    import torch
    from mistral_common.audio import mel_filter_bank
    from torch import nn
    from vllm.model_executor.models.voxtral import VoxtralEncoderModel
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeGeneration
    from vllm.model_executor.models.whisper_causal import WhisperCausalConv1d, WhisperCausalEncoder

    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)

    def bare(cls):
        obj = nn.Module.__new__(cls)
        nn.Module.__init__(obj)
        return obj

    conv = bare(WhisperCausalEncoder)
    conv.conv1 = WhisperCausalConv1d(128, d_model, kernel_size=3).to(dtype)
    conv.conv2 = WhisperCausalConv1d(d_model, d_model, stride=2, kernel_size=3).to(dtype)
    conv.total_stride = 2
    enc = bare(VoxtralEncoderModel)
    enc.config = SimpleNamespace(window_size=400, hop_length=160, global_log_mel_max=global_max)
    enc.dtype = dtype
    enc.whisper_encoder = conv
    enc.register_buffer("mel_filters", torch.tensor(mel_filter_bank(
        num_frequency_bins=201, num_mel_bins=128, min_frequency=0.0, max_frequency=8000.0,
        sampling_rate=SAMPLE_RATE), dtype=torch.float32), persistent=False)
    model = bare(VoxtralRealtimeGeneration)
    model.whisper_encoder = enc
    model.config = SimpleNamespace(audio_config=SimpleNamespace(block_pool_size=4))
    return model.to(device)


def vllm_embed(model, audio):
    """vLLM 0.32.0's own embed_multimodal (unwrapped if the plugin wrapped it here)."""
    from vllm.model_executor.models.voxtral_realtime import VoxtralRealtimeGeneration

    method = VoxtralRealtimeGeneration.embed_multimodal
    return getattr(method, "__wrapped__", method)(model, audio_arrays=audio)


def sessions(n: int, dtype_name: str, length: int = STEADY, seed: int = 1, device: str = "cpu"):
    """Each session's next chunk: different voices and levels, as sessions at different points
    of different speech (every fifth one silent)."""
    import torch

    rng = np.random.default_rng(seed)
    t = np.arange(length) / SAMPLE_RATE
    out = []
    for k in range(n):
        tone = np.sin(2 * np.pi * (110 + 37 * k) * t) * (0.05 + 0.1 * k % 0.8)
        out.append(tone + rng.normal(0, 0.02 * (k % 3), length) if k % 5 != 4 else 0 * t)
    return torch.tensor(np.stack(out), dtype=getattr(torch, dtype_name), device=device)


def timed(step, repeats: int, cuda: bool) -> float:
    """Mean ms of ``step()`` over ``repeats`` calls after 3 warm-up calls."""
    import torch

    for _ in range(3):
        step()
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
        if cuda:
            torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1000 / repeats


def measure(n: int, width: int, a) -> dict:
    import torch

    from voxcap.engine.vllm_adapter import audio_frontend, audio_frontend_graphs

    cuda = a.device == "cuda"
    model = front_end(a.dtype, width, device=a.device)
    # the realtime audio config the graphs read the steady chunk length from (the real model's)
    config = SimpleNamespace(sampling_rate=SAMPLE_RATE, frame_rate=TOKENS_PER_SECOND,
                             streaming_look_back_ms=52.5, streaming_look_ahead_ms=2.5)
    model.tokenizer = SimpleNamespace(instruct=SimpleNamespace(
        audio_encoder=SimpleNamespace(audio_config=config)))
    audio = sessions(n, a.dtype, device=a.device)
    row = {"sessions": n, "width": width, "device": a.device, "dtype": a.dtype}
    with torch.inference_mode():
        row["per_session_ms"] = round(timed(lambda: vllm_embed(model, audio), a.repeats, cuda), 3)
        row["batched_ms"] = round(timed(lambda: audio_frontend.batched_frontend(model, audio),
                                        a.repeats, cuda), 3)
        if cuda:
            def replay():
                return audio_frontend_graphs.replay(model, audio, audio_frontend.batched_frontend,
                                                    audio_frontend.COUNTS)
            row["graph_ms"] = round(timed(replay, a.repeats, cuda), 3) if replay() is not None \
                else None
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,2,8,48")
    ap.add_argument("--widths", default="64,1280")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rows = [measure(n, w, a) for w in map(int, a.widths.split(","))
            for n in map(int, a.sessions.split(","))]
    print("| width | sessions | vLLM per session ms | batched ms | CUDA graph ms |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['width']} | {r['sessions']} | {r['per_session_ms']} | {r['batched_ms']} | "
              f"{r.get('graph_ms', '-')} |")
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
