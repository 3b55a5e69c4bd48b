"""GPU memory: whether the engine fits, in the words every front end uses (engine/sizing/verdict.py)."""

from __future__ import annotations

from ...engine.settings import DEFAULT_STEP_TOKENS
from ...engine.sizing import memory
from ...engine.sizing.memory import Sizing
from ...engine.sizing.streams import most_streams
from ...engine.sizing.verdict import read_gpu_facts, verdict
from ...errors import VoxcapError
from .base import FAIL, OK, SKIP, Check, Context, _gib


def _sizing(ctx: Context) -> Sizing:
    return Sizing(ctx.precision, ctx.streams, ctx.max_model_len, ctx.kv_cache_gib)


def _needs(ctx: Context, info, choice) -> tuple[str, dict]:
    """What the engine takes with ``choice`` (precision.Choice), in words and as figures."""
    fp = memory.footprint(info, choice.streams, ctx.max_model_len, ctx.kv_cache_gib,
                          precision=choice.precision).as_dict()
    fp.update(precision=choice.precision.name, precision_label=choice.label,
              streams=choice.streams)
    return (f"needs ≈{_gib(fp['total_bytes'])} as {choice.label} (weights "
            f"{_gib(fp['weights_bytes'])} + KV cache {_gib(fp['kv_cache_bytes'])} for "
            f"{choice.streams} stream(s) + {_gib(fp['overhead_bytes'])} CUDA context, activations "
            "and graphs)"), fp


def check_gpu_memory(ctx: Context, args) -> Check:
    title = "GPU memory for the model"
    if ctx.engine == "remote":
        return Check("gpu_memory", title, SKIP, "not needed: captions come from a vLLM server")
    gpu = ctx.gpu
    facts = read_gpu_facts(gpu) if gpu is not None else None
    try:
        v = verdict(ctx.model_info, _sizing(ctx), facts)
    except VoxcapError as exc:  # a precision this GPU cannot run
        return Check("gpu_memory", title, FAIL, exc.message, exc.fix)
    needs, details = _needs(ctx, ctx.model_info, v.choice)
    if gpu is None or facts is None:
        return Check("gpu_memory", title, SKIP, f"no usable GPU to check against; on a GPU the "
                     f"model {needs}", "", details)
    need, total = v.choice.need_bytes, facts.total_bytes
    details.update(gpu_total_bytes=total, gpu_free_bytes=facts.free_bytes,
                   gpu_used_bytes=gpu.memory_used_bytes, verdict=v.kind,
                   start_needs_free_bytes=v.choice.free_needed_bytes,
                   vllm_utilization=memory.gpu_memory_utilization_for(need, total)
                   if need is not None and total is not None else None,  # (known on a GPU)
                   precision_line=v.line)
    each = _each_gpu(ctx, details)
    if v.fits:
        fewer = ("; only one source at a time fits (Both needs two streams)"
                 if v.kind == "fewer_streams" else "")
        return Check("gpu_memory", title, OK, f"{v.line}: the model {needs}{fewer}{each}"
                     f"{_served(ctx, facts, details)}", "", details)
    return Check("gpu_memory", title, FAIL, v.line + each, v.fix, details)


def _served(ctx: Context, facts, details: dict) -> str:
    """How many streams `voxcap serve` would take on this GPU now, at the session length set."""
    best = most_streams(ctx.model_info, _sizing(ctx), facts, DEFAULT_STEP_TOKENS)
    if best is None:
        return ""
    length = memory.footprint(ctx.model_info, 1, ctx.max_model_len).plan.max_model_len
    details.update(serve_streams=best.streams, serve_precision=best.precision.name,
                   serve_max_model_len=length)
    return (f"; `voxcap serve` here: up to {best.streams} streams of {length} tokens "
            f"({best.label}; --max-streams, --max-model-len)")


def _each_gpu(ctx: Context, details: dict) -> str:
    """With several GPUs, what each one fits now (one `voxcap serve --gpus N` engine each)."""
    gpus = ctx.gpus or []
    if len(gpus) < 2:
        return ""
    details["each_gpu"] = each = []
    for g in gpus:
        try:
            v = verdict(ctx.model_info, _sizing(ctx), read_gpu_facts(g))
        except VoxcapError as exc:
            each.append({"index": g.index, "verdict": "fail", "line": exc.message})
            continue
        each.append({"index": g.index, "verdict": v.kind, "precision": v.choice.precision.name,
                     "streams": v.choice.streams, "line": v.line})
    words = [f"GPU {e['index']}: " + (f"{e['streams']} stream(s) as {e['precision']}"
                                      if e["verdict"] in ("fits", "fewer_streams") else "nothing now")
             for e in each]
    return f"; what each of the {len(gpus)} GPUs fits now: {', '.join(words)}"
