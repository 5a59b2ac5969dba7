"""Every example script runs and prints real output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_runs_and_ranks_x_first():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], check=True, capture_output=True, text=True
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("FanovaResult(n_trials=500")
    assert lines[1].split()[0] == "x"
    assert sum(line.startswith("lr=") for line in lines) == 5
