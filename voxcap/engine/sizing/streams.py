"""How many streams fit a GPU now, at a session length: what `voxcap serve`'s start gate and the
doctor say. No fixed cap: a stream costs its KV cache for the session length asked (memory.py),
and each step gives every stream one token of the step token budget (settings.step_tokens)."""

from __future__ import annotations

from dataclasses import replace

from .memory import Sizing, choose_precision


def most_streams(info, sizing: Sizing, gpu, limit: int):
    """The precision.Choice with the most streams, up to ``limit``, that starts on ``gpu`` now
    with ``sizing``'s precision (Automatic: the most precise that fits that many) and session
    length; None when not even one does or the GPU's memory is not known."""

    def fitting(n: int):
        c = choose_precision(info, replace(sizing, streams=n), gpu)
        return c if c.fits and c.need_bytes is not None and c.streams == n else None

    best = fitting(1)
    if best is None:
        return None
    low, high = 1, limit  # fitting(low); the memory a stream takes grows with the streams
    while low < high:
        mid = (low + high + 1) // 2
        c = fitting(mid)
        if c is not None:
            low, best = mid, c
        else:
            high = mid - 1
    return best
