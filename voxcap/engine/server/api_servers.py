"""How many of vLLM's API server processes `voxcap serve` runs when ``--api-servers`` is not
given: one per ``STREAMS_PER_API_SERVER`` sessions served, on the GPU build, up to the cores left
after the engine cores.

Each session's websocket, JSON and base64, its audio's preprocessing and the detokenizing of its
deltas run in an API server process (vLLM's), one core at most each. On the H200 one API process
was at 100 % of a core from about 24 real-time sessions, and four of them at 27-46 % each for 48
(docs/perf/capacity.md); vLLM's CPU build cannot run more than one (`vllm serve` does not start
there)."""

from __future__ import annotations

import math
import os

STREAMS_PER_API_SERVER = 24


def api_servers_for(streams: int, engines: int, build: str, cpus: int | None = None) -> int:
    """API server processes for ``streams`` sessions in all over ``engines`` engine cores."""
    if build != "cuda":
        return 1
    spare = (cpus or os.cpu_count() or 1) - engines - 1  # a core per engine core, one for the rest
    return max(1, min(math.ceil(streams / STREAMS_PER_API_SERVER), spare))
