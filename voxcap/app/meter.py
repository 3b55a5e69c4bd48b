"""The throughput meter's figures, sampled once a second. No Qt here.

Every figure is measured, never derived from what the settings asked for:

- tokens/s, step latency p50/p95 (audio chunk handed to vLLM -> its token back), headroom
  (80 ms / p50), backlog (audio received but not yet turned into text), the steps vLLM ran per
  CUDA-graph runtime mode: from ``engine.stats`` (``voxcap.engine.stats``);
- the graph mode vLLM resolved: from ``EngineReady``;
- caption lag (heard -> on screen, see ``lag``) and delta -> painted: measured by the GUI at
  paint time, kept in ``lag.RecentValues``;
- dropped audio: the capture layer's reported losses, remote-engine gaps, held audio dropped;
- rollovers: the engine sessions the streams moved on to (``SessionRolled``), this session;
- GPU memory used/total and load: NVML (``voxcap.gpu``), None ("n/a") without it;
- with a vLLM server (``server``): the step time is the round trip the client measures, and
  what only the server knows (graph mode, precision, its GPU) is not shown.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from .. import gpu as gpu_mod
from ..engine.stats import STEP_BUDGET_MS
from .lag import RecentValues

HISTORY_S = 60
BEHIND_BACKLOG_MS = 2000.0  # audio waiting for the engine beyond this: not keeping up
BEHIND_LAG_S = 6.0  # heard -> on screen (p95) beyond this: not keeping up


@dataclass(frozen=True)
class MeterReading:
    at: float
    engine_ready: bool
    requested_mode: str | None
    resolved_mode: str | None
    full_share: float | None  # steps vLLM replayed as full CUDA graphs / all steps
    steps: int
    tokens_per_s: float | None
    step_p50_ms: float | None
    step_p95_ms: float | None
    headroom: float | None
    backlog_ms: float | None
    lag_p50_s: float | None
    lag_p95_s: float | None
    paint_p50_ms: float | None
    paint_p95_ms: float | None
    dropped_s: float
    held_s: float
    streams: int
    gpu: gpu_mod.GpuReading | None
    budget_ms: float = STEP_BUDGET_MS
    precision: str | None = None  # "FP8 weights: fits this 12 GB card (...)" (EngineReady)
    server: str = ""  # "MODEL at ws://HOST:PORT": captions from a vLLM server (EngineReady)
    rollovers: int = 0  # fresh engine sessions the streams moved to in this captioning session


class MeterSampler:
    def __init__(self, controller, caption_lag: RecentValues, paint_lag: RecentValues,
                 read_gpu=gpu_mod.read_gpu) -> None:
        self.controller = controller
        self.caption_lag = caption_lag
        self.paint_lag = paint_lag
        self._read_gpu = read_gpu
        self.history: deque[MeterReading] = deque(maxlen=HISTORY_S + 5)

    def sample(self) -> MeterReading:
        ctl = self.controller
        snap = ctl.stats()
        ready = ctl.ready_info
        lag50, lag95 = self.caption_lag.percentiles(10.0)
        p50, p95 = self.paint_lag.percentiles(10.0)
        full = None
        if snap is not None and snap.steps_by_graph_mode:
            full = snap.graph_share("FULL")
        open_streams = [s for s in snap.streams if not s.finished] if snap is not None else []
        r = MeterReading(
            at=time.time(), engine_ready=ready is not None,
            requested_mode=ready.requested_graph_mode if ready else None,
            resolved_mode=ready.resolved_graph_mode if ready else None,
            full_share=full, steps=sum(snap.steps_by_graph_mode.values()) if snap else 0,
            tokens_per_s=snap.tokens_per_s if snap else None,
            step_p50_ms=snap.step_p50_ms if snap else None,
            step_p95_ms=snap.step_p95_ms if snap else None,
            headroom=snap.headroom if snap else None,
            backlog_ms=snap.backlog_ms if snap else None,
            lag_p50_s=lag50, lag_p95_s=lag95,
            paint_p50_ms=p50 * 1000 if p50 is not None else None,
            paint_p95_ms=p95 * 1000 if p95 is not None else None,
            dropped_s=ctl.dropped_audio_s(), held_s=ctl.held_audio_s(),
            streams=len(open_streams), gpu=self._read_gpu(),
            precision=(getattr(ready, "precision_line", "") or getattr(ready, "precision", "")
                       or None) if ready else None,
            server=getattr(ready, "server", "") if ready else "",
            rollovers=getattr(ctl, "rollovers", 0))
        self.history.append(r)
        return r

    def series(self, field: str, scale: float = 1.0) -> list[tuple[float, float]]:
        """(time, value) of the last minute for a chart; missing values are left out."""
        now = time.time()
        out = []
        for r in self.history:
            v = getattr(r, field)
            if v is not None and now - r.at <= HISTORY_S:
                out.append((r.at, v * scale))
        return out


def pace(r: MeterReading) -> str:
    """Keeping up, catching up or falling behind: judged from what waits (backlog) and what
    the reader sees (caption lag), not from step time alone: fast steps beside a long backlog
    (after a restart, say) are catching up, not keeping up."""
    if r.headroom is None:
        return ""
    waiting = []
    if r.backlog_ms is not None and r.backlog_ms > BEHIND_BACKLOG_MS:
        waiting.append(f"backlog {r.backlog_ms / 1000:.0f} s")
    if r.lag_p95_s is not None and r.lag_p95_s > BEHIND_LAG_S:
        waiting.append(f"captions {r.lag_p95_s:.0f} s late")
    if waiting:
        verdict = "catching up" if r.headroom >= 1 else "FALLING BEHIND"
        return f"{verdict}: {', '.join(waiting)}"
    return "keeping up" if r.headroom >= 1 else "FALLING BEHIND"
