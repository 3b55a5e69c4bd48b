"""Voxtral Realtime's audio front end run once per step for all its sessions
(``VOXCAP_VLLM_BATCHED_FRONTEND=1``; set by the in-process engine and ``voxcap serve``; off
unless set).

vLLM 0.32.0's ``VoxtralRealtimeGeneration.embed_multimodal`` gets every audio item of a step in
one call, then computes one log-mel spectrogram per item in a Python loop (``torch.stft``, pad,
mel matmul, clamps: ``VoxtralEncoderModel.compute_whisper_melspec``) and runs the two causal
convolutions per item (``WhisperCausalEncoder.forward_conv``), all eagerly: ~25 small kernels
and their Python per session per step. On the H200 at 48 sessions that was 37 % of the engine
core, the process that limits how many sessions one GPU keeps.

Every session's chunk after its first has the same length (80 ms of new audio plus the
look-back and look-ahead: 2,160 samples at 16 kHz), so the step's chunks are one tensor
(B, 2,160) and the whole front end is batch-safe as written upstream: ``torch.stft`` takes a
batch, the mel filter matmul broadcasts, the clamp against ``global_log_mel_max`` is per element
and the causal convolutions pad the time axis only. The fix runs vLLM's own
``compute_whisper_melspec`` and the encoder's own ``conv1``/``conv2`` modules once on the batch,
and on CUDA replays that pass as a CUDA graph per batch size (audio_frontend_graphs.py).

What stays on vLLM's per-session path (the items go to the original method, in their order):
a session's first chunk (the prompt prefix's audio, ~3 s: one per session), any item longer
than 1 s or shorter than 80 ms, items not 1-D, a step of one chunk on the CPU (nothing to
share, and without a graph the batched pass's 3-D tensors cost a little more), and everything
when the model has no ``global_log_mel_max`` (then the spectrogram's clamp is per item's
maximum, which one batched call would share).

Same tensors: on vLLM's CPU build the batched pass is bitwise equal to the per-session one in
float32 and bfloat16 (tests/engine/vllm_adapter/test_audio_frontend.py). One detail makes it so:
PyTorch runs a float32 convolution of batch 1 and this size with its native kernel but a batch
with oneDNN (or NNPACK from 16 items), whose sums round differently; the batched convolution is
run with both off (on the CPU, float32, items of that size only): the native kernel computes
each item of a batch as it computes one. On CUDA the kernels may pick other algorithms
per batch size: there the comparison is the tokens (benchmarks/gpu/audio_frontend_steps.sh).
``VOXCAP_VLLM_FRONTEND_CHECK=1`` also runs the per-session path for every batched item and
counts items that differ (for tests and the GPU check; it doubles the front end's cost).
``VOXCAP_VLLM_FRONTEND_GRAPHS=0`` keeps the batched pass eager on CUDA.

vLLM's log says which path ran: once per path, then a count every 1,000 steps; the counts are
also read from the worker (``frontend_counts``, through ``collective_rpc``). Guarded to the exact
vLLM version; elsewhere it does nothing, with a logged warning. Upstream-ready report:
docs/perf/upstream-batched-audio-frontend.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import asdict, dataclass

from ...framing import SAMPLE_RATE, STEP_SAMPLES
from .pin import PINNED_VLLM, env_on, install_wrapper, installed, pinned_attr

logger = logging.getLogger("vllm.voxcap_patches")

FRONTEND_ENV = "VOXCAP_VLLM_BATCHED_FRONTEND"
CHECK_ENV = "VOXCAP_VLLM_FRONTEND_CHECK"
GRAPHS_ENV = "VOXCAP_VLLM_FRONTEND_GRAPHS"
COUNTS_RPC = "voxcap_audio_frontend_counts"  # the worker method collective_rpc calls
_FLAG = "_voxcap_batched_frontend"
MAX_BATCHED_SAMPLES = SAMPLE_RATE  # 1 s: later chunks (2,160) go batched, a session's first (~3 s) not
MIN_BATCHED_SAMPLES = STEP_SAMPLES  # shorter chunks have no token of their own: vLLM's path
LOG_EVERY_STEPS = 1000
MAX_FAILURES = 3
# PyTorch runs a float32 CPU convolution of batch 1 with its native kernel up to this many input
# elements (channels x frames), with oneDNN above (aten/src/ATen/native/Convolution.cpp, use_mkldnn)
_NATIVE_CONV_MAX_ELEMENTS = 20480


def graphs_on() -> bool:
    """CUDA graphs for the batched pass unless VOXCAP_VLLM_FRONTEND_GRAPHS says off."""
    return os.environ.get(GRAPHS_ENV, "").strip().lower() not in ("0", "false", "no", "off")


def enabled() -> bool:
    return env_on(FRONTEND_ENV)


@dataclass
class Counts:
    """What the front end did in this process (one engine core or worker)."""

    steps: int = 0  # embed_multimodal calls
    batched_items: int = 0
    batched_passes: int = 0
    graph_items: int = 0  # of batched_items, replayed from a CUDA graph
    graph_replays: int = 0
    per_session_items: int = 0
    failures: int = 0  # steps the batched path raised in (vLLM's path took them)
    graphs_captured: int = 0
    capture_failures: int = 0
    batched_host_s: float = 0.0  # host time in the batched passes (kernels queued, not waited for)
    checked_items: int = 0  # VOXCAP_VLLM_FRONTEND_CHECK: batched items compared with vLLM's path
    differing_items: int = 0
    max_abs_diff: float = 0.0
    checked_per_session_host_s: float = 0.0  # vLLM's path's host time for the same items


COUNTS = Counts()
_said: set[str] = set()


def say_once(key: str, message: str, *args, level: int = logging.INFO, **kwargs) -> None:
    if key not in _said:
        _said.add(key)
        logger.log(level, message, *args, **kwargs)


def apply() -> bool:
    """Wrap VoxtralRealtimeGeneration.embed_multimodal and give the worker its counts method."""
    model = pinned_attr("batched audio front end", "voxcap/engine/vllm_adapter/audio_frontend.py "
                        "against voxtral_realtime.py", logger,
                        "vllm.model_executor.models.voxtral_realtime", "VoxtralRealtimeGeneration")
    if model is None:
        return False
    if not getattr(model.embed_multimodal, _FLAG, False):  # else: a second plugin load
        from vllm.v1.worker.worker_base import WorkerBase

        original = model.embed_multimodal
        install_wrapper(model, "embed_multimodal", _FLAG,
                        lambda self, **kwargs: embed_batched(self, original, kwargs))
        setattr(WorkerBase, COUNTS_RPC, lambda _worker: frontend_counts())
        logger.info("voxcap batched audio front end applied (vLLM %s, pid %d): a step's "
                    "audio chunks share one mel spectrogram and conv pass%s", PINNED_VLLM, os.getpid(),
                    "" if graphs_on() else " (CUDA graphs off)")
    return True


def applied() -> bool:
    return installed(logger, "vllm.model_executor.models.voxtral_realtime",
                     "VoxtralRealtimeGeneration", "embed_multimodal", _FLAG)


def frontend_counts() -> dict:
    return asdict(COUNTS)


def embed_batched(model, original, kwargs: dict):
    """``original(model, **kwargs)``'s result, with the items it can take computed batched."""
    COUNTS.steps += 1
    try:
        result = _embed(model, original, kwargs)
    except _VllmRaised as raised:  # vLLM's own path raised: as it would have without us
        raise raised.error from None
    except Exception:  # noqa: BLE001 (logged by say_once; never take the engine down for an optimisation)
        COUNTS.failures += 1
        say_once("failed", "voxcap batched audio front end failed; vLLM's per-session path "
                 "takes the step (and every step after %d failures)", MAX_FAILURES,
                 level=logging.WARNING, exc_info=True)
        if COUNTS.failures >= MAX_FAILURES:
            _said.add("off")
        result = original(model, **kwargs)
    if COUNTS.steps % LOG_EVERY_STEPS == 0:
        logger.info("voxcap audio front end so far: %s", _summary())
    return result


def _summary() -> str:
    c = COUNTS
    text = (f"{c.steps} steps, {c.batched_items} items batched in {c.batched_passes} passes "
            f"({c.graph_items} replayed from CUDA graphs, {c.graphs_captured} captured, "
            f"{c.capture_failures} failed), {c.per_session_items} per session")
    if c.checked_items:
        text += (f"; checked {c.checked_items} against vLLM's path: {c.differing_items} differ "
                 f"(max abs diff {c.max_abs_diff:g}), host time {c.batched_host_s:.3f} s batched "
                 f"vs {c.checked_per_session_host_s:.3f} s per session")
    return text


class _VllmRaised(Exception):
    """vLLM's own method raised ``error``: not a failure of the batched path."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def _vllm(original, model, kwargs: dict):
    try:
        return original(model, **kwargs)
    except Exception as exc:
        raise _VllmRaised(exc) from exc


def _embed(model, original, kwargs: dict):
    import torch

    audio = kwargs.get("audio_arrays")
    if audio is None or "off" in _said:
        return _vllm(original, model, kwargs)
    if isinstance(audio, torch.Tensor) and audio.dim() == 2 and _has_global_max(model) \
            and MIN_BATCHED_SAMPLES <= audio.shape[1] <= MAX_BATCHED_SAMPLES \
            and audio.is_floating_point():  # the usual step: vLLM stacked equal-length chunks
        if audio.shape[0] == 1 and not audio.is_cuda:  # one chunk, no graph: nothing to win
            COUNTS.per_session_items += 1
            return _vllm(original, model, kwargs)
        return list(_timed_batch(model, original, kwargs, audio))
    items = list(audio.unbind(0)) if isinstance(audio, torch.Tensor) else list(audio)
    groups = _batchable(model, items)
    grouped = {i for idx in groups.values() for i in idx}
    rest = [i for i in range(len(items)) if i not in grouped]
    if rest:
        say_once("per-session", "voxcap audio front end: %d item(s) of %s samples on vLLM's "
                 "per-session path (a session's first chunk, or other lengths)",
                 len(rest), sorted({items[i].shape[0] for i in rest}))
        COUNTS.per_session_items += len(rest)
    if not groups:
        return _vllm(original, model, kwargs)
    out: list = [None] * len(items)
    if rest:
        for i, emb in zip(rest, _vllm(original, model, {**kwargs, "audio_arrays":
                                                        [items[i] for i in rest]}), strict=True):
            out[i] = emb
    for idx in groups.values():
        embeds = _timed_batch(model, original, kwargs, torch.stack([items[i] for i in idx]))
        for i, emb in zip(idx, embeds, strict=True):
            out[i] = emb
    return out


def _timed_batch(model, original, kwargs: dict, batch):
    t0 = time.perf_counter()
    embeds = _run_batch(model, batch)
    COUNTS.batched_host_s += time.perf_counter() - t0
    if env_on(CHECK_ENV):
        _check(model, original, kwargs, list(batch.unbind(0)), embeds)
    return embeds


def _has_global_max(model) -> bool:
    if isinstance(getattr(model.whisper_encoder.config, "global_log_mel_max", None), float):
        return True
    say_once("no-global-max", "voxcap batched audio front end: this model clamps each "
             "spectrogram by its own maximum (no global_log_mel_max); vLLM's per-session path runs")
    return False


def _batchable(model, items) -> dict[int, list[int]]:
    """Indices of the items the batched pass takes, by length (each group one pass)."""
    if not _has_global_max(model):
        return {}
    groups: dict[int, list[int]] = {}
    for i, item in enumerate(items):
        if item.dim() == 1 and MIN_BATCHED_SAMPLES <= item.shape[0] <= MAX_BATCHED_SAMPLES \
                and item.is_floating_point():
            groups.setdefault(int(item.shape[0]), []).append(i)
    return groups


def _run_batch(model, batch):
    """(B, tokens, features) for B equal-length chunks: a CUDA graph's replay where one is (or
    can be) captured, else the same pass eagerly."""
    from . import audio_frontend_graphs as graphs

    n = batch.shape[0]
    out = None
    if batch.is_cuda and graphs_on():
        out = graphs.replay(model, batch, batched_frontend, COUNTS)
    if out is not None:
        COUNTS.graph_items += n
        COUNTS.graph_replays += 1
        say_once("graph", "voxcap audio front end: %d chunk(s) of %d samples in one pass "
                 "replayed from a CUDA graph", n, batch.shape[1])
    else:
        out = batched_frontend(model, batch)
        say_once("eager", "voxcap audio front end: %d chunk(s) of %d samples in one eager pass "
                 "(%s)", n, batch.shape[1],
                 "no CUDA graph for it" if batch.is_cuda else f"no CUDA graphs on {batch.device}")
    COUNTS.batched_items += n
    COUNTS.batched_passes += 1
    return out.unbind(0)


def batched_frontend(model, audio):
    """What vLLM's embed_multimodal computes per item, for a (B, samples) batch of equal-length
    chunks in one pass: (B, tokens, block_pool_size * d_model)."""
    import torch.nn.functional as F

    enc = model.whisper_encoder
    mel = enc.compute_whisper_melspec(audio).to(enc.dtype)  # (B, mels, frames)
    if mel.shape[-1] % 2:  # vLLM drops the leftmost frame of an odd count
        mel = mel[..., 1:]
    conv = enc.whisper_encoder
    with _conv_as_for_one(mel):
        hidden = conv.conv1(mel)
    hidden = F.gelu(hidden)
    with _conv_as_for_one(hidden):
        hidden = conv.conv2(hidden)
    hidden = F.gelu(hidden).transpose(-1, -2)  # (B, frames / stride, d_model)
    pool = model.config.audio_config.block_pool_size
    if extra := hidden.shape[1] % pool:  # vLLM drops the leftmost frames to a multiple of pool
        hidden = hidden[:, extra:]
    return hidden.reshape(hidden.shape[0], hidden.shape[1] // pool, hidden.shape[2] * pool)


def _conv_as_for_one(x):
    """Run the convolution of a batch with the kernel PyTorch picks for one of its items (see the
    module's docstring); a no-op but for float32 on the CPU."""
    import torch

    if x.device.type != "cpu" or x.dtype != torch.float32 or x.shape[0] == 1 \
            or x[0].numel() > _NATIVE_CONV_MAX_ELEMENTS:
        return contextlib.nullcontext()
    return _native_conv()


@contextlib.contextmanager
def _native_conv():
    """PyTorch's own convolution kernel: oneDNN and NNPACK (chosen from batch 16) off."""
    import torch

    was = torch._C._get_mkldnn_enabled(), torch._C._get_nnpack_enabled()
    torch._C._set_mkldnn_enabled(False)
    torch._C._set_nnpack_enabled(False)
    try:
        yield
    finally:
        torch._C._set_mkldnn_enabled(was[0])
        torch._C._set_nnpack_enabled(was[1])


def _check(model, original, kwargs: dict, items, embeds) -> None:
    """Count the batched items whose embedding is not bitwise vLLM's per-session one."""
    t0 = time.perf_counter()
    reference = original(model, **{**kwargs, "audio_arrays": list(items)})
    COUNTS.checked_per_session_host_s += time.perf_counter() - t0
    for ref, got in zip(reference, embeds, strict=True):
        COUNTS.checked_items += 1
        if ref.shape != got.shape or not bool((ref == got).all()):
            COUNTS.differing_items += 1
            if ref.shape == got.shape:
                diff = float((ref.float() - got.float()).abs().max())
                COUNTS.max_abs_diff = max(COUNTS.max_abs_diff, diff)
            say_once("differs", "voxcap audio front end check: a batched embedding differs from "
                     "vLLM's per-session one (shape %s vs %s)", tuple(got.shape), tuple(ref.shape))
