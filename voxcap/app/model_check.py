"""What a model folder means here, for the dialogs that let a person choose one: usable or not
(and the fix), the automatic GPU memory budget, and what each precision would take on this GPU
now. In the core's words (settings named by markers: ``setting_refs``). Each reads the
folder's files (tekken.json is megabytes) or NVML: not on a GUI thread.

    reason, fix = check_model_dir(path, dummy_weights)   # ("", "") when usable
    budget, verdict_line = kv_note(path, dummy_weights, Sizing(...))
    costs = choice_costs(path, dummy_weights, Sizing(...))
"""

from __future__ import annotations

import logging

from ..engine.model.folder import inspect_model_dir
from ..engine.sizing import memory
from ..engine.sizing import verdict as verdicts  # read_gpu_facts looked up when called
from ..engine.sizing.memory import Sizing
from ..errors import VoxcapError

log = logging.getLogger(__name__)


def check_model_dir(path: str, dummy_weights: bool) -> tuple[str, str]:
    """("", "") when ``path`` holds a usable model, else (reason, fix)."""
    try:
        inspect_model_dir(path, dummy_weights)
    except VoxcapError as exc:
        return exc.message, exc.fix
    return "", ""


def kv_note(path: str, dummy_weights: bool, sizing: Sizing, gpu: bool = True) -> tuple[str, str]:
    """(the automatic GPU memory budget, the verdict on this GPU now; "" without a GPU) for
    this model folder and ``sizing`` (precision and session length), in the words the engine's
    start gate and ``voxcap doctor`` use; ("", "") when there is no estimate. ``gpu``: False
    where the engine runs without a CUDA GPU (the memory is the computer's)."""
    try:
        info = inspect_model_dir(path, dummy_weights)
        facts = verdicts.read_gpu_facts()
        v = verdicts.verdict(info, sizing, facts)
        fp = memory.footprint(info, v.choice.streams, sizing.max_model_len, sizing.kv_cache_gib,
                              precision=v.choice.precision)
    except (VoxcapError, KeyError, TypeError, ValueError):
        log.warning("no memory estimate for %s", path, exc_info=True)
        return "", ""
    line = "" if facts is None else v.text
    where = "GPU memory" if gpu else "this computer's memory (no GPU here)"
    return (f"≈{memory.gib(fp.kv_cache_bytes)} KV cache for {v.choice.streams} streams, "
            f"≈{memory.gib(fp.total_bytes)} of {where} in all"), line


def choice_costs(path: str, dummy_weights: bool, sizing: Sizing) -> str:
    """What each precision would take on this GPU now, where more than one fits (for a person
    choosing one); "" otherwise."""
    try:
        facts = verdicts.read_gpu_facts()
        fitting = [] if facts is None else memory.choices_that_fit(
            inspect_model_dir(path, dummy_weights), sizing, facts)
    except (VoxcapError, KeyError, TypeError, ValueError):
        log.warning("no per-choice estimate for %s", path, exc_info=True)
        return ""
    if len(fitting) < 2:
        return ""
    return "Each choice that fits now: " + "; ".join(
        f"{c.label} ≈{memory.gib(c.need_bytes)} for {c.streams} stream{'s' if c.streams > 1 else ''}"
        for c in fitting)
