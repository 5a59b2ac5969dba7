#!/usr/bin/env bash
# The test command: sets up .venv if needed, then lint, type checks, unit tests and
# end-to-end integration runs. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
.venv/bin/ruff check src tests examples benchmarks
.venv/bin/mypy
# SMAC 2.4 runs repeat across processes only with a fixed hash seed (it iterates over
# hash-ordered sets); the end-to-end SMAC tests compare rankings of real runs.
PYTHONHASHSEED=0 .venv/bin/python -m pytest "$@"
