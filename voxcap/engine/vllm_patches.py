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
unchanged (tests/engine/test_vllm_patches.py).
"""

from __future__ import annotations

import logging
import os

# Logged under vLLM's logger tree: vLLM configures only that tree in its processes, so the
# messages appear in vLLM's own log (and in voxcap's start-up stage file) wherever they run.
logger = logging.getLogger("vllm.voxcap_patches")

SESSION_FIX_ENV = "VOXCAP_VLLM_SESSION_FIX"
PINNED_VLLM = "0.32.0"
_PATCHED_FLAG = "_voxcap_session_fix"


def session_fix_enabled() -> bool:
    return os.environ.get(SESSION_FIX_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def apply_enabled() -> list[str]:
    """The plugin entry point: apply the fixes switched on in the environment; return their names."""
    applied = []
    if session_fix_enabled() and apply_session_fix():
        applied.append("session")
    return applied


def apply_session_fix() -> bool:
    """Wrap Scheduler._update_request_as_session so consumed audio items leave the session."""
    try:
        import vllm
        from vllm.v1.core.sched.scheduler import Scheduler
    except Exception:  # vLLM missing or broken: nothing to patch
        logger.warning("voxcap session fix not applied: vLLM could not be imported", exc_info=True)
        return False
    version = getattr(vllm, "__version__", "?")
    if version != PINNED_VLLM:
        logger.warning("voxcap session fix not applied: written for vLLM %s, this is %s "
                       "(check whether upstream fixed issue #58324, then update or remove "
                       "voxcap/engine/vllm_patches.py)", PINNED_VLLM, version)
        return False
    original = getattr(Scheduler, "_update_request_as_session", None)
    if original is None:
        logger.warning("voxcap session fix not applied: Scheduler._update_request_as_session "
                       "is missing in this vLLM build")
        return False
    if getattr(original, _PATCHED_FLAG, False):
        return True  # a second plugin load in the same process

    def _update_request_as_session(self, session, update):
        original(self, session, update)
        try:
            drop_consumed_mm_features(self, session)
        except Exception:  # never take the engine down for an optimisation
            logger.warning("voxcap session fix failed for request %s; left as it was",
                           getattr(session, "request_id", "?"), exc_info=True)

    setattr(_update_request_as_session, _PATCHED_FLAG, True)
    _update_request_as_session.__wrapped__ = original
    _update_request_as_session.__doc__ = original.__doc__
    Scheduler._update_request_as_session = _update_request_as_session
    logger.info("voxcap session fix applied (vLLM %s, pid %d): consumed audio items leave "
                "realtime sessions", version, os.getpid())
    return True


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
