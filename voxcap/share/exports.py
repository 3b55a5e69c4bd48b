"""The session so far as the caption server's ``/captions.txt`` and ``/captions.vtt``: rendered
once per journal state and one at a time, so a loop of requests costs one render, not one each
(rendering a two-hour session reads its whole journal and takes a second or more of CPU).

    exports = Exports(render, state)      # render(fmt) -> text, on a worker thread
    text = await exports.get(".vtt")      # on the server's event loop

``state()`` (on the loop, cheap) says what the text would be made of: the journal file's size
and time, the events the server has seen, the masker. A request is answered from the last
render of its format when the state is the same, or when that render began after the request
came (it saw all the request could); otherwise it waits for its turn and renders.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable


class Exports:
    def __init__(self, render: Callable[[str], str], state: Callable[[], Hashable]) -> None:
        self._render, self._state = render, state
        self._lock: asyncio.Lock | None = None  # made on the loop that uses it
        self._kept: dict[str, tuple[Hashable, float, str]] = {}  # fmt -> (state, began, text)
        self.renders = 0
        self._rendering = 0
        self.most_at_once = 0  # renders running at the same time, at most (for tests)

    async def get(self, fmt: str) -> str:
        asked = time.monotonic()
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            state = self._state()
            kept = self._kept.get(fmt)
            if kept is not None and (kept[0] == state or kept[1] >= asked):
                return kept[2]
            began = time.monotonic()
            self._rendering += 1
            self.most_at_once = max(self.most_at_once, self._rendering)
            try:
                text = await asyncio.to_thread(self._render, fmt)
            finally:
                self._rendering -= 1
            self.renders += 1
            self._kept[fmt] = (state, began, text)
            return text
