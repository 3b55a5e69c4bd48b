#!/usr/bin/env bash
# voxcap's test command, from nothing: system packages, virtual environment, then pytest.
# The sound server, X server and vLLM engine are started by the tests' own fixtures.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m "not slow"` for the quick subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-dev.sh
VENV=${VOXCAP_VENV:-.venv}
# Two workers (pytest-xdist): much of the suite waits on real time (audio, servers, windows) and
# the engines run one thread each, so two cores take two at once. tests/support/parallel_groups.py
# keeps the session engine's tests on one worker, each module together. VOXCAP_TEST_WORKERS=0
# runs everything in this one process.
exec "$VENV/bin/python" -m pytest -n "${VOXCAP_TEST_WORKERS:-2}" "$@"
