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
# Two pytest-xdist workers by default (pytest 18.5-19 min here instead of ~29 in one process:
# much of it waits on real time, each engine runs one thread); tests/support/parallel_groups.py
# keeps the session engine's tests on one worker, each module together, and vLLM's reference
# tokens are computed once for both (support/shared_reference.py); tests marked quiet run alone.
# VOXCAP_TEST_WORKERS=0: one process.
exec "$VENV/bin/python" -m pytest -n "${VOXCAP_TEST_WORKERS:-2}" "$@"
