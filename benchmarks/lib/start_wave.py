"""Round trips of N sessions that opened together, split into the start wave and the rest.

When every session opens within a second, each one's first step (a prefill of tens of tokens)
is admitted against the step token budget while the others already run: round trips climb for
the first steps and drain back. Whole-session percentiles mix that wave with the steady state;
these figures keep them apart."""

from __future__ import annotations

from .percentiles import percentile

STEADY_AFTER_STEPS = 25  # 2 s of 80 ms steps: past the start wave up to 64 sessions on the H200
WAVE_OVER_MS = 60.0  # a step whose median round trip over the sessions is above this is in the wave


def after_start(rtt_ms: list[list[float]], skip: int = STEADY_AFTER_STEPS) -> dict:
    """p50/p95/p99 over each session's steps after its first ``skip``, and the start wave's
    length: the first step from which the median over the sessions stays within WAVE_OVER_MS."""
    rest = [x for steps in rtt_ms for x in steps[skip:]]
    longest = max((len(s) for s in rtt_ms), default=0)
    medians = [percentile((s[i] for s in rtt_ms if len(s) > i), 50) for i in range(longest)]
    wave = next((i for i in range(longest) if all(m <= WAVE_OVER_MS for m in medians[i:])), None)
    return {"after_steps": skip,
            **{f"p{q}_ms": percentile(rest, q, digits=1, method="higher") for q in (50, 95, 99)},
            "wave_steps": wave}
