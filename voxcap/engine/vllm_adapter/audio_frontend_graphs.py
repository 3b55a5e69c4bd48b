"""The batched audio front end (audio_frontend.py) replayed as CUDA graphs: one graph per batch
size (1, 2, 4, 8, ... up to 256), captured the first time a step needs that size, for the
steady chunk length only (80 ms of new audio plus look-back and look-ahead).

Why it is capture-safe: the chunk length is fixed, so every shape in the pass is fixed per
batch size; the pass has no host synchronisation (the spectrogram's clamp is against the
model's constant ``global_log_mel_max``, never a ``.max()`` read back; the causal padding is
computed from shapes); and the graph reads its input from, and writes its output to,
persistent buffers: a step copies its chunks into the input's first B rows (rows past B keep
older audio; every row is computed on its own, so they touch nothing else) and clones the
output's first B rows, because vLLM's encoder cache keeps each embedding beyond the step while
the next replay overwrites the buffer. Two eager warm-up passes first create cuFFT's plan and
pick cuDNN's algorithms, which capture must not do.

A capture that fails (an operation CUDA cannot capture, memory) is logged with its reason and
the batched pass stays eager from then on, for every batch size: the step still gets it.
Capture runs inside a step, once per size (torch.cuda.graph's side stream); graphs share one
memory pool; replays run on vLLM's current stream.
"""

from __future__ import annotations

import logging
import time

logger = logging.getLogger("vllm.voxcap_patches")

MAX_GRAPH_BATCH = 256


class _Captured:
    def __init__(self, graph, audio, out) -> None:
        self.graph, self.audio, self.out = graph, audio, out


class FrontEndGraphs:
    """The graphs of one (chunk length, dtype, device)."""

    def __init__(self) -> None:
        self.captured: dict[int, _Captured] = {}
        self.failed: dict[int, str] = {}
        self.pool = None


_graphs: dict[tuple, FrontEndGraphs] = {}


def steady_chunk_samples(model) -> int | None:
    """Samples of every realtime chunk after a session's first (vLLM's VoxtralRealtimeBuffer:
    one frame of new audio plus look-back and look-ahead)."""
    try:
        cfg = model.audio_config
        rate = cfg.sampling_rate
        frame = rate / cfg.frame_rate
        around = rate * (cfg.streaming_look_back_ms + cfg.streaming_look_ahead_ms) / 1000
    except Exception:  # noqa: BLE001 (not the realtime audio config vLLM 0.32 has: no graphs)
        return None
    total = frame + around
    return int(total) if float(total).is_integer() else None


def graph_batch(n: int) -> int | None:
    size = 1
    while size < n:
        size *= 2
    return size if size <= MAX_GRAPH_BATCH else None


def replay(model, audio, frontend, counts):
    """``frontend(model, audio)`` for a (B, samples) CUDA batch from a captured graph, or None
    where no graph covers it (another length, too large, capture failed)."""
    size = graph_batch(audio.shape[0])
    if size is None or audio.shape[1] != steady_chunk_samples(model):
        return None
    key = (audio.shape[1], audio.dtype, audio.device)
    graphs = _graphs.setdefault(key, FrontEndGraphs())
    captured = graphs.captured.get(size)
    if captured is None:
        if graphs.failed:
            return None
        captured = _capture(model, graphs, size, audio, frontend, counts)
        if captured is None:
            return None
    n = audio.shape[0]
    captured.audio[:n].copy_(audio)
    captured.graph.replay()
    return captured.out[:n].clone()


def _capture(model, graphs: FrontEndGraphs, size: int, like, frontend, counts):
    import torch

    t0 = time.perf_counter()
    try:
        audio = torch.zeros((size, like.shape[1]), dtype=like.dtype, device=like.device)
        audio[: like.shape[0]].copy_(like)  # real audio: warm-up sees the values a step does
        stream = torch.cuda.Stream(device=like.device)
        stream.wait_stream(torch.cuda.current_stream(like.device))
        with torch.cuda.stream(stream):
            for _ in range(2):
                frontend(model, audio)
        torch.cuda.current_stream(like.device).wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=graphs.pool, capture_error_mode="thread_local"):
            out = frontend(model, audio)
        if graphs.pool is None:
            graphs.pool = graph.pool()
    except Exception as exc:  # any failure: this size stays eager, said once
        graphs.failed[size] = f"{type(exc).__name__}: {exc}"
        counts.capture_failures += 1
        logger.warning("voxcap audio front end: CUDA graph capture for %d chunk(s) of %d samples "
                       "failed, the batched pass stays eager: %s", size, like.shape[1],
                       graphs.failed[size], exc_info=True)
        return None
    captured = graphs.captured[size] = _Captured(graph, audio, out)
    counts.graphs_captured += 1
    logger.info("voxcap audio front end: captured a CUDA graph for %d chunk(s) of %d samples in "
                "%.0f ms", size, like.shape[1], (time.perf_counter() - t0) * 1000)
    return captured
