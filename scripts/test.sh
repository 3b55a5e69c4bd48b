#!/usr/bin/env bash
# voxcap's test command, from nothing: system packages, virtual environment, then pytest.
# The sound server, X server and vLLM engine are started by the tests' own fixtures.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m "not slow"` for the quick subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-dev.sh
VENV=${VOXCAP_VENV:-.venv}
# Lint first ([tool.ruff] in pyproject.toml: errors, imports, complexity): seconds, and a finding
# fails the run before any test starts.
"$VENV/bin/ruff" check .
# Then the types ([tool.mypy]: voxcap/, its large libraries not followed): ~4 s from cold, its
# cache in .mypy_cache.
"$VENV/bin/mypy"
# The machine's speed, to compare this run's time with docs/guide/developers.md's figures.
"$VENV/bin/python" scripts/machine_speed.py
# Python writes the bytecode of what the tests import (each file once, at its first import:
# setup-dev.sh compiles none), also where PYTHONDONTWRITEBYTECODE is set, as on this machine;
# without it every vLLM process would compile its ~4,000 imports again (~20 s of CPU).
unset PYTHONDONTWRITEBYTECODE
# Three pytest-xdist workers by default (2 cores here: pytest 11-19 min by the machine; two workers
# used 71 % of the cores: much of the suite waits on real time, and each engine runs one thread);
# tests/support/parallel_groups.py keeps the session engine's tests on one worker, the shared
# `voxcap serve`'s (support/shared_serve.py) on one, each module together, and vLLM's reference
# tokens are computed once for all (support/shared_reference.py); tests marked quiet run alone, last.
# VOXCAP_TEST_WORKERS=0: one process.
exec "$VENV/bin/python" -m pytest -n "${VOXCAP_TEST_WORKERS:-3}" "$@"
