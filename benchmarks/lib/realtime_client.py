"""A paced realtime client of a vLLM server: sessions fed speech in real time (one 80 ms block
every 80 ms) through the remote engine's own connection and messages
(voxcap/engine/remote/connection.py, protocol.py), each step timed.

Step k of a session needs its first 9,000 samples (480 ms delay), then 1,280 more per step; its
clock starts when the append completing that audio is handed to the websocket and stops when
the k-th ``transcription.delta`` is read (the flush steps after the final commit have no audio
of their own: counted, not timed).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from dataclasses import dataclass, field

import numpy as np

from voxcap.engine.remote import connection, protocol
from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES, STEP_SECONDS, steps_ready

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 30.0


@dataclass
class SessionResult:
    index: int
    rtt_ms: list[float] = field(default_factory=list)  # per timed step, in step order
    deltas: list[str] = field(default_factory=list)
    timed_steps: int = 0
    done: bool = False
    error: str | None = None
    send_late_ms: list[float] = field(default_factory=list)  # block sent later than its slot
    block_sent: list[float] = field(default_factory=list)  # loop time each block was sent
    clocks: list[float] = field(default_factory=list)  # loop time each step's clock started

    @property
    def text(self) -> str:
        return "".join(self.deltas)

    def behind(self, limit_ms: float) -> bool:
        if not self.done or self.error or len(self.rtt_ms) < self.timed_steps:
            return True
        tail = self.rtt_ms[-int(2.0 / STEP_SECONDS):]
        return bool(tail) and statistics.median(tail) > limit_ms


async def run_session(index: int, url: str, model: str, key: str | None, pcm: np.ndarray,
                      start_at: float, drain_s: float, first_step: int,
                      compression: str | None = "deflate") -> SessionResult:
    """One real-time session: paced appends from ``start_at`` (loop time), clocks per step."""
    res = SessionResult(index)
    loop = asyncio.get_running_loop()
    total = len(pcm)
    res.timed_steps = steps_ready(total, first_step)
    clocks = res.clocks
    await asyncio.sleep(max(0.0, start_at - loop.time()))
    try:
        ws = await connection.connect(url, key, CONNECT_TIMEOUT_S, keepalive=False, compression=compression)
        try:
            await connection.open_session(ws, model, url, CONNECT_TIMEOUT_S)
            await connection.send(ws, protocol.AudioCommit())

            async def receive() -> None:
                async for frame in ws:
                    msg = protocol.decode(frame)
                    if isinstance(msg, protocol.TranscriptionDelta):
                        now = loop.time()
                        k = len(res.deltas)
                        res.deltas.append(msg.delta)
                        if k < res.timed_steps:
                            if k >= len(clocks):  # the server answered a step not yet sent
                                raise RuntimeError(f"delta {k} before its audio was sent")
                            res.rtt_ms.append(1000 * (now - clocks[k]))
                    elif isinstance(msg, protocol.TranscriptionDone):
                        res.done = True
                        return
                    elif isinstance(msg, protocol.ErrorEvent):
                        raise RuntimeError(f"server error: {msg.error} ({msg.code})")

            receiver = asyncio.create_task(receive())
            t0 = loop.time()
            sent = 0
            for j in range(0, total, STEP_SAMPLES):
                slot = t0 + (j // STEP_SAMPLES) * STEP_SECONDS
                wait = slot - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                else:
                    res.send_late_ms.append(-1000 * wait)
                if receiver.done():
                    break
                block = pcm[j:j + STEP_SAMPLES]
                frame = protocol.encode(protocol.AudioAppend(block))
                sent += len(block)
                ready = steps_ready(sent, first_step)
                now = loop.time()
                clocks.extend([now] * (ready - len(clocks)))  # before the send
                res.block_sent.append(now)
                await ws.send(frame)
            if not receiver.done():
                await connection.send(ws, protocol.AudioCommit(final=True))
            await asyncio.wait({receiver}, timeout=drain_s)
            if receiver.done():
                receiver.result()  # its error, if any
            else:
                receiver.cancel()
                res.error = f"no transcription.done within {drain_s:.0f} s of the audio's end"
        finally:
            await connection.close(ws)
    except Exception as exc:  # a session's failure is a result, logged
        log.info("session %d failed", index, exc_info=True)
        res.error = f"{type(exc).__name__}: {exc}"[:300]
    return res


async def run_sessions(url: str, model: str, key: str | None, audio: np.ndarray, n: int,
                       spread_s: float, drain_s: float, first_step: int,
                       compression: str | None = "deflate") -> list[SessionResult]:
    """N sessions, starts spread evenly over ``spread_s``; session i gets ``audio`` rotated by
    i x 0.52 s (the same audio for session i in every configuration)."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2
    shift = int(0.52 * SAMPLE_RATE)
    return list(await asyncio.gather(*(
        run_session(i, url, model, key, np.roll(audio, -i * shift), start + spread_s * i / n,
                    drain_s, first_step, compression) for i in range(n))))
