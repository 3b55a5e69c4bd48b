"""TESTS ONLY: make the model stall the way vLLM #47614 describes (a realtime session emitting
only ``[STREAMING_PAD]`` over real speech), so the caption watchdog can be tested on the real
engine. Off unless ``VOXCAP_TEST_PAD_STALL=1`` is in the engine's environment; never set by voxcap.

Two switches, so that the tests' one shared engine can carry it: the environment flag wraps
``Scheduler.update_from_output`` in the engine core (then inert), and a stream whose sampling
parameters carry ``extra_args[STALL_KEY] = n`` gets every sampled token from its session's
n-th step on replaced by the pad token (``stall_extra_args``: the app's engine adds it to a
stream opened while ``VOXCAP_TEST_STALL_AFTER_STEPS`` is set in its process). Steps are counted
per engine session (request), so a fresh session captions again for n steps: the transient
stall a fresh session cures. n = 0 stalls every session from its first step on.
"""

from __future__ import annotations

import logging
import os

from .pin import env_on

logger = logging.getLogger("vllm.voxcap_patches")

PAD_STALL_ENV = "VOXCAP_TEST_PAD_STALL"  # the engine core's side
STALL_AFTER_ENV = "VOXCAP_TEST_STALL_AFTER_STEPS"  # the front end's side, read at stream open
STALL_KEY = "voxcap_test_stall_after"
PAD_ID = 32  # [STREAMING_PAD] in the real model's tokenizer and the tiny one's
_FLAG = "_voxcap_pad_stall"


def enabled() -> bool:
    return env_on(PAD_STALL_ENV)


def stall_extra_args() -> dict:
    """The sampling ``extra_args`` that stall a stream opened now ({} unless asked for)."""
    value = os.environ.get(STALL_AFTER_ENV, "")
    return {STALL_KEY: int(value)} if value.strip() else {}


def apply() -> bool:
    from vllm.v1.core.sched.scheduler import Scheduler

    original = Scheduler.update_from_output
    if getattr(original, _FLAG, False):
        return True
    steps: dict[str, int] = {}  # request id -> steps sampled so far

    def update_from_output(self, scheduler_output, model_runner_output):
        sampled = model_runner_output.sampled_token_ids
        for req_id, index in (model_runner_output.req_id_to_index or {}).items():
            request = self.requests.get(req_id)
            extra = getattr(getattr(request, "sampling_params", None), "extra_args", None) or {}
            after = extra.get(STALL_KEY)
            if after is None or not sampled or index >= len(sampled) or not len(sampled[index]):
                continue
            steps[req_id] = steps.get(req_id, 0) + 1
            if steps[req_id] > after:
                sampled[index] = [PAD_ID] * len(sampled[index])
        return original(self, scheduler_output, model_runner_output)

    setattr(update_from_output, _FLAG, True)
    setattr(update_from_output, "__wrapped__", original)  # noqa: B010 (mypy: a function's attribute)
    Scheduler.update_from_output = update_from_output
    logger.info("voxcap TEST pad stall installed (pid %d): streams that ask for it emit only "
                   "[STREAMING_PAD] after n steps", os.getpid())
    return True
