"""Fixes for vLLM 0.32.0 that voxcap applies at run time, through vLLM's general-plugin entry point.

vLLM runs every ``vllm.general_plugins`` entry point in each of its processes before it builds
its engine; ``apply_enabled`` is one (see pyproject.toml). Nothing installed is edited: the fix
wraps one method of vLLM's scheduler class in the process's memory. It is guarded to the exact
vLLM version whose source it was written against and does nothing, with a logged warning, on any
other version; remove it once upstream has the fix (vLLM issue #58324).

Session fix (``VOXCAP_VLLM_SESSION_FIX=1``; off unless set): in a realtime (streaming-input)
session, every 80 ms chunk appends one audio item to the request's ``mm_features`` and the
session is re-scheduled as a *new* request, so each step copies and ships every audio item of
the session so far (``strip_covered_mm_data`` in ``NewRequestData.from_request``; with a worker
process, also pickling them): per-step CPU time grows linearly with the session's length, and
the raw audio of every committed frame stays in memory (vLLM issue #50860). Items whose tokens
are already computed are never used again: their encoder outputs are consumed and freed, no
block hash still to be computed covers them. The fix drops those items from the session when
the next chunk arrives, keeping the scheduler's encoder-cache bookkeeping (indices into
``mm_features``) consistent: the list stays within one hash block (``hash_block_size`` tokens,
e.g. 128) plus the newest items, or two items with prefix caching off. Produced tokens are
unchanged (tests/engine/vllm_adapter/test_vllm_patches.py).

Token carry (``VOXCAP_VLLM_TOKEN_CARRY=1``; off unless set): each realtime chunk's prompt is the
token the session sampled last, so vLLM's realtime buffer cannot send chunk n+1 before chunk n's
token made the round trip engine core → front end → engine core; on the H200 the engine core
waited ~40 % of each 1-stream step for it (docs/perf/upstream-realtime-roundtrip.md). With
the fix, a chunk whose sampling params carry ``extra_args[CARRY_KEY]`` has its first prompt
token replaced, in the engine core, by the token the session sampled last — the one vLLM
discards from the session when the chunk is applied, and the one the front end would have
echoed. The front end may then send chunks ahead of their tokens (voxcap/engine/inprocess/feed.py)
and the next chunk is already queued when a step ends. Same tokens and log-probabilities as the
echo (tests/engine/vllm_adapter/test_vllm_patches.py).
"""

from __future__ import annotations

import logging
import os

from .carry import CARRY_KEY, TOKEN_CARRY_ENV
from .pin import env_on, pinned_version

# Logged under vLLM's logger tree: vLLM configures only that tree in its processes, so the
# messages appear in vLLM's own log (and in voxcap's start-up stage file) wherever they run.
logger = logging.getLogger("vllm.voxcap_patches")

SESSION_FIX_ENV = "VOXCAP_VLLM_SESSION_FIX"
_PATCHED_FLAG = "_voxcap_session_fix"
_CARRY_FLAG = "_voxcap_token_carry"
_applied_here: list[str] = []  # what apply_enabled applied in this process (a fork inherits it)


def session_fix_enabled() -> bool:
    return env_on(SESSION_FIX_ENV)


def token_carry_enabled() -> bool:
    return env_on(TOKEN_CARRY_ENV)


def apply_enabled() -> list[str]:
    """The plugin entry point: apply the fixes switched on in the environment; return their names."""
    applied = []
    if session_fix_enabled() and apply_session_fix():
        applied.append("session")
    if token_carry_enabled() and apply_token_carry():
        applied.append("token_carry")
    from . import (
        cpu_processes as vllm_cpu_processes,  # the CPU build's processes as on one GPU (its docstring)
    )

    if vllm_cpu_processes.enabled() and vllm_cpu_processes.apply():
        applied.append("cpu_as_gpu")
    from . import realtime_input  # realtime chunks skip the generic HF processor (its docstring)

    if realtime_input.enabled() and realtime_input.apply():
        applied.append("realtime_input")
    from . import audio_frontend  # a step's audio chunks in one front-end pass (its docstring)

    if audio_frontend.enabled() and audio_frontend.apply():
        applied.append("batched_frontend")
    from . import pad_stall  # TESTS ONLY: a model that stalls on demand (its docstring)

    if pad_stall.enabled() and pad_stall.apply():
        applied.append("test_pad_stall")
    from . import realtime_carry  # /v1/realtime sends chunks ahead of their tokens (its docstring)

    if env_on(realtime_carry.REALTIME_CARRY_ENV) and realtime_carry.apply("token_carry" in applied):
        applied.append("realtime_carry")
    _applied_here[:] = applied
    return applied


def log_inherited() -> None:
    """In a process forked from one that applied the fixes (an engine core vLLM forked): say so
    in vLLM's log, as a spawned one's plugin does (a fork gets no plugin call of its own)."""
    if _applied_here:
        logger.info("voxcap fixes inherited by forked process (pid %d from %d): %s", os.getpid(),
                    os.getppid(), ", ".join(_applied_here))


def _wrap_session_update(fix: str, flag: str, make_wrapper, effect: str) -> bool:
    """Replace Scheduler._update_request_as_session by ``make_wrapper(current method)``, marked
    with ``flag``, when on the pinned vLLM and not done yet in this process; log it as ``fix``."""
    version = pinned_version(fix, "whether upstream fixed it, then update or remove "
                             "voxcap/engine/vllm_adapter/patches.py", logger)
    if version is None:
        return False
    from vllm.v1.core.sched.scheduler import Scheduler

    original = getattr(Scheduler, "_update_request_as_session", None)
    if original is None:
        logger.warning("voxcap %s not applied: Scheduler._update_request_as_session "
                       "is missing in this vLLM build", fix)
        return False
    if _is_wrapped(original, flag):
        return True  # a second plugin load in the same process
    wrapper = make_wrapper(original)
    setattr(wrapper, flag, True)
    wrapper.__wrapped__ = original
    wrapper.__doc__ = original.__doc__
    Scheduler._update_request_as_session = wrapper
    logger.info("voxcap %s applied (vLLM %s, pid %d): %s", fix, version, os.getpid(), effect)
    return True


def _is_wrapped(method, flag: str) -> bool:
    while method is not None:
        if getattr(method, flag, False):
            return True
        method = getattr(method, "__wrapped__", None)
    return False


def _applied(flag: str) -> bool:
    try:
        from vllm.v1.core.sched.scheduler import Scheduler
    except Exception:
        logger.warning("vLLM's scheduler could not be imported", exc_info=True)
        return False
    return _is_wrapped(getattr(Scheduler, "_update_request_as_session", None), flag)


def token_carry_applied() -> bool:
    """Whether this process's scheduler carries tokens (a forked or spawned engine core of the
    same vLLM and environment then does too: the plugin runs in every vLLM process)."""
    return _applied(_CARRY_FLAG)


def session_fix_applied() -> bool:
    return _applied(_PATCHED_FLAG)


def apply_token_carry() -> bool:
    """Wrap Scheduler._update_request_as_session so a flagged chunk gets the session's last token."""

    def make_wrapper(original):
        def _update_request_as_session(self, session, update):
            return original(self, session, carry_last_token(session, update))
        return _update_request_as_session

    return _wrap_session_update("token carry", _CARRY_FLAG, make_wrapper,
                                "realtime chunks may be sent ahead of their tokens")


def carry_last_token(session, update):
    """``update`` with its first prompt token set to the token ``session`` sampled last, when
    its sampling params ask for it; otherwise ``update`` unchanged.

    The token is the last of ``session._all_token_ids[num_computed_tokens:]``: what
    ``_update_request_as_session`` discards ("the last sampled output token") and what vLLM's
    realtime buffer would have echoed (``all_outputs[-1:]``)."""
    params = getattr(update, "sampling_params", None)
    extra = getattr(params, "extra_args", None) or {}
    if not extra.get(CARRY_KEY) or not update.prompt_token_ids:
        return update
    pending = session._all_token_ids[session.num_computed_tokens:]
    if not pending:
        # nothing sampled since the last chunk (cannot happen with one token a chunk): the
        # placeholder would reach the model, so say so loudly
        logger.warning("voxcap token carry: %s has no sampled token to carry; its chunk keeps "
                       "the placeholder", session.request_id)
        return update
    ids = list(update.prompt_token_ids)
    ids[0] = pending[-1]
    update.prompt_token_ids = ids
    return update


def apply_session_fix() -> bool:
    """Wrap Scheduler._update_request_as_session so consumed audio items leave the session."""

    def make_wrapper(original):
        def _update_request_as_session(self, session, update):
            original(self, session, update)
            try:
                drop_consumed_mm_features(self, session)
            except Exception:  # never take the engine down for an optimisation
                logger.warning("voxcap session fix failed for request %s; left as it was",
                               getattr(session, "request_id", "?"), exc_info=True)
        return _update_request_as_session

    return _wrap_session_update("session fix", _PATCHED_FLAG, make_wrapper,
                                "consumed audio items leave realtime sessions")


def drop_consumed_mm_features(scheduler, session) -> int:
    """Drop the leading multimodal items of ``session`` that nothing will read again.

    An item goes when (1) its placeholder tokens end at or before the last block boundary
    under ``num_computed_tokens`` (so no block hash still to be computed covers it; with prefix
    caching off, at or before ``num_computed_tokens``) and (2) the
    scheduler's encoder cache holds no reference to it (its output has been freed). Indices the
    encoder-cache manager keeps for this request are shifted to match. Returns how many went.
    """
    features = session.mm_features
    if len(features) <= 1:
        return 0
    if getattr(scheduler, "ec_connector", None) is not None:
        return 0  # an encoder-cache connector keeps its own per-index state: leave it alone
    if getattr(session, "_block_hasher", True) is None:
        frontier = session.num_computed_tokens  # no prefix caching: no block hash to compute
    else:  # items of the last, partly computed block go into its hash once it is full
        block = max(int(getattr(scheduler, "hash_block_size", 1) or 1), 1)
        frontier = (session.num_computed_tokens // block) * block
    manager = scheduler.encoder_cache_manager
    cached = manager.get_cached_input_ids(session)
    keep_last = len(features) - 1  # the newest item is what the next step encodes
    k = 0
    while k < keep_last:
        pos = features[k].mm_position
        if pos.offset + pos.length > frontier or k in cached:
            break
        k += 1
    if k == 0:
        return 0
    if cached:
        ids = getattr(manager, "request_cached_ids", None)
        if not isinstance(ids, dict) or session.request_id not in ids:
            return 0  # a manager whose indices this fix does not know how to shift
        ids[session.request_id] = {i - k for i in ids[session.request_id]}
    # a new list, not del in place: the first step's list may be shared with the worker's state
    session.mm_features = features[k:]
    logger.debug("voxcap session fix: %s dropped %d consumed audio items, %d left",
                 session.request_id, k, len(session.mm_features))
    return k
