"""GPU memory: whether the engine fits, in the words every front end uses."""

from __future__ import annotations

from ...engine.sizing import memory
from ...errors import VoxcapError
from .base import (
    FAIL,
    OK,
    SKIP,
    Check,
    Context,
    _gib,
)


def _gpu_facts(ctx: Context):
    from ...engine.sizing.precision import GpuFacts

    gpu = ctx.gpu
    if gpu is None:
        return GpuFacts()
    free = gpu.memory_free_bytes
    if free is None:
        free = gpu.memory_total_bytes - gpu.memory_used_bytes - gpu.memory_reserved_bytes
    return GpuFacts(gpu.memory_total_bytes, free, gpu.compute_capability)


def precision_choice(ctx: Context, info, gpu=None):
    """The precision the engine would start with now (engine/sizing/precision.py), on ``gpu``
    (precision.GpuFacts; default: the GPU as it is now)."""
    return memory.choose_precision(info, ctx.precision, ctx.streams, ctx.max_model_len,
                                   ctx.kv_cache_gib, None, gpu or _gpu_facts(ctx))


def memory_footprint(ctx: Context, info, choice=None) -> dict:
    """GPU memory the local engine takes with these settings (bytes), and how each part was
    found: the weights file, the KV cache as vLLM lays it out, the measured rest."""
    choice = choice or precision_choice(ctx, info)
    fp = memory.footprint(info, choice.streams, ctx.max_model_len, ctx.kv_cache_gib,
                          precision=choice.precision).as_dict()
    fp.update(precision=choice.precision.name, precision_label=choice.label,
              streams=choice.streams)
    return fp


def check_gpu_memory(ctx: Context, args) -> Check:
    title = "GPU memory for the model"
    if ctx.engine == "remote":
        return Check("gpu_memory", title, SKIP, "not needed: captions come from a vLLM server")
    try:
        choice = precision_choice(ctx, ctx.model_info)
    except VoxcapError as exc:  # a precision this GPU cannot run
        return Check("gpu_memory", title, FAIL, exc.message, exc.fix)
    fp = memory_footprint(ctx, ctx.model_info, choice)
    details = dict(fp)
    need = fp["total_bytes"]
    needs = (f"needs ≈{_gib(need)} as {choice.label} (weights {_gib(fp['weights_bytes'])} + KV "
             f"cache {_gib(fp['kv_cache_bytes'])} for {choice.streams} stream(s) + "
             f"{_gib(fp['overhead_bytes'])} CUDA context, activations and graphs)")
    gpu = ctx.gpu
    if gpu is None:
        return Check("gpu_memory", title, SKIP, f"no usable GPU to check against; on a GPU the "
                     f"model {needs}", "", details)
    facts = _gpu_facts(ctx)
    total, free = facts.total_bytes, facts.free_bytes
    f = memory.fit(need, total, free)
    details.update(gpu_total_bytes=total, gpu_free_bytes=free, gpu_used_bytes=gpu.memory_used_bytes,
                   vllm_utilization=f.utilization, vllm_start_needs_free_bytes=int(need),
                   precision_line=choice.line)
    if choice.fits:
        fewer = ("; only one source at a time fits (Both needs two streams)"
                 if choice.streams < ctx.streams else "")
        return Check("gpu_memory", title, OK, f"{choice.line}: the model {needs}{fewer}", "",
                     details)
    from ...engine.sizing.precision import GpuFacts

    empty = precision_choice(ctx, ctx.model_info, GpuFacts(total, int(total * 0.95),
                                                           facts.compute_capability))
    if not empty.fits and ctx.precision != "auto":
        return Check("gpu_memory", title, FAIL,
                     f"this {_gib(total)} GPU is too small for {empty.label} with "
                     f"{empty.streams} stream(s): it needs ≈{_gib(empty.free_needed_bytes)} free "
                     "to start", "set the precision to Automatic (Settings → Engine → Precision, "
                     "or --precision auto): it picks FP8 where bfloat16 does not fit", details)
    if not empty.fits:
        return Check("gpu_memory", title, FAIL,
                     f"this {_gib(total)} GPU is too small: even as {empty.label} for one stream "
                     f"the model needs ≈{_gib(empty.free_needed_bytes)} free to start",
                     "caption through a vLLM server on a bigger GPU: run `voxcap serve` there, "
                     "then use --engine remote --server ws://HOST:8000 (Settings → Engine → A vLLM "
                     "server)", details)
    auto = "" if ctx.precision == "auto" else (
        f"; with the precision on Automatic it would start as {empty.label} once that is free")
    return Check("gpu_memory", title, FAIL,
                 f"only {_gib(free)} of {_gib(total)} is free now and the model {needs}, "
                 f"≈{_gib(choice.free_needed_bytes)} free while it starts; other programs use "
                 f"{_gib(gpu.memory_used_bytes)}",
                 "close programs that use the GPU (`nvidia-smi` lists them: games, other "
                 f"AI tools, browsers with hardware acceleration) and start captions again{auto}",
                 details)
