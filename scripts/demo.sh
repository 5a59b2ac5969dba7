#!/usr/bin/env bash
# The main job: sets up .venv if needed, runs an Optuna study on an embedded SQLite file
# with importances refreshed while it runs, then writes a report. Extra arguments go to
# the demo (see: scripts/demo.sh --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
exec .venv/bin/python examples/demo_optuna_sqlite.py "$@"
