"""What a realtime session's prompt tokens are fed with: the echo vLLM's realtime server does, or
placeholders the engine core fills in (voxcap's token carry, vllm_adapter/patches.py).

vLLM's realtime buffer (``buffer_realtime_audio``) builds each 80 ms chunk's prompt from a token
queue: the first chunk takes the streaming prefix, every later one waits for one more token.
Echo puts each step's sampled token there, so chunk n+1 leaves only once chunk n's token has
come back to the front end. Carry puts a placeholder there instead, ``ahead`` of them at the
start and one more per token that comes back: up to ``ahead`` + 1 chunks are in flight, and the
engine core, which knows the sampled token, writes it over the placeholder when it applies the
chunk. Bounded so that a long file's audio is not queued in the engine core all at once.
"""

from __future__ import annotations

import asyncio

from ..vllm_adapter.carry import CARRY_AHEAD, CARRY_KEY, PLACEHOLDER_TOKEN


class TokenFeed:
    """The token queue handed to ``buffer_realtime_audio`` and how outputs refill it."""

    def __init__(self, carry: bool, ahead: int = CARRY_AHEAD) -> None:
        self.carry = carry
        self.queue: asyncio.Queue[list[int]] = asyncio.Queue()
        if carry:
            for _ in range(ahead):
                self.queue.put_nowait([PLACEHOLDER_TOKEN])

    def output(self, token_ids) -> None:
        """One step's output came back (call on the event loop, for every output)."""
        if not self.carry:
            self.queue.put_nowait(list(token_ids))  # the buffer takes the last one
        elif token_ids:
            self.queue.put_nowait([PLACEHOLDER_TOKEN])

    def sampling_extra_args(self) -> dict | None:
        """``SamplingParams.extra_args`` asking the engine core to carry the token."""
        return {CARRY_KEY: True} if self.carry else None
