"""The capacity benchmark's split of round trips into the start wave and the rest
(benchmarks/lib/start_wave.py), on the H200 run's own data in docs/perf/h200-frontend-capacity/."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.lib.start_wave import after_start

DATA = Path(__file__).resolve().parents[3] / "docs/perf/h200-frontend-capacity/capacity"


def runs(server: str) -> dict[int, dict]:
    return {r["n"]: r for r in json.loads((DATA / f"{server}.json").read_text())["runs"]}


def test_the_h200_runs_p95_at_32_sessions_is_its_start_wave():
    row = runs("now")[32]
    split = after_start(row["rtt_ms"])
    assert row["p95_ms"] > 200  # whole sessions, as reported
    assert split["p95_ms"] < 30 and split["wave_steps"] == 9
    assert split["after_steps"] == 25


def test_the_wave_grows_with_the_sessions_and_a_server_that_never_recovers_has_none():
    now = runs("now")
    assert after_start(now[64]["rtt_ms"])["wave_steps"] == 24
    assert after_start(now[96]["rtt_ms"])["wave_steps"] > 60
    assert after_start(runs("vllm")[64]["rtt_ms"])["wave_steps"] is None  # all 64 behind


def test_a_late_spike_keeps_the_wave_open_until_it_is_over():
    steady = [[20.0] * 30 for _ in range(4)]
    spiked = [s[:] for s in steady]
    for s in spiked:
        s[27] = 500.0
    assert after_start(steady)["wave_steps"] == 0
    assert after_start(spiked)["wave_steps"] == 28
    assert after_start(spiked)["p99_ms"] == 500.0
