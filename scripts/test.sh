#!/usr/bin/env bash
# voxcap's test command, from nothing: system packages, virtual environment, then pytest.
# The sound server, X server and vLLM engine are started by the tests' own fixtures.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m "not slow"` for the quick subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-dev.sh
VENV=${VOXCAP_VENV:-.venv}
exec "$VENV/bin/python" -m pytest "$@"
