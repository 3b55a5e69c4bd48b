"""A caption session as the controller publishes it, scripted: for the share tests and the
caption server's benchmark (benchmarks/share_bench.py)."""

from __future__ import annotations

import time

from voxcap.events import CaptioningState, StreamFinished, StreamOpened, TextDelta
from voxcap.framing import STEP_SECONDS


class Script:
    """A caption session as the controller publishes it: words ``w0 w1 ...`` of one stream,
    one 80 ms step each, every word followed by an empty step (which completes it)."""

    def __init__(self, publish, label: str = "Them", stream_id: str = "s1",
                 session_id: str = "sess-1") -> None:
        self.publish, self.stream_id, self.label = publish, stream_id, label
        self.index = 0
        self.words: list[str] = []
        publish(CaptioningState("starting", session_id, (label,)))
        publish(StreamOpened(stream_id, label, "test source"))
        publish(CaptioningState("on", session_id, (label,)))

    def delta(self, text: str) -> TextDelta:
        i = self.index
        self.index += 1
        ev = TextDelta(self.stream_id, text, (), i, i * STEP_SECONDS, (i + 1) * STEP_SECONDS,
                       time.time())
        self.publish(ev)
        return ev

    def say(self, n: int, pause_every: int = 0) -> list[str]:
        new = []
        for _ in range(n):
            word = f"w{len(self.words)}"
            self.words.append(word)
            new.append(word)
            self.delta(" " + word)
            self.delta("")
            if pause_every and len(self.words) % pause_every == 0:
                for _ in range(25):  # 2 s without text: a new line
                    self.delta("")
        return new

    def finish(self) -> None:
        self.publish(StreamFinished(self.stream_id, "flushed", self.index,
                                    self.index * STEP_SECONDS))
