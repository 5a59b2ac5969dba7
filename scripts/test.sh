#!/usr/bin/env bash
# The test command: sets up .venv if needed, then lint, type checks, unit tests and
# end-to-end integration runs. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
.venv/bin/ruff check src tests integrations examples benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
