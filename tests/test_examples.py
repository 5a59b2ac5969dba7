"""Every example script runs and prints real output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_runs_and_ranks_x_first():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], check=True, capture_output=True, text=True
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("FanovaResult(n_trials=500")
    assert lines[1].split()[0] == "x"
    assert sum(line.startswith("lr=") for line in lines) == 5


def test_smac_example_watches_both_forests_and_reads_the_run_back():
    pytest.importorskip("smac")
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "smac_live_importance.py"), "--trials", "40"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("incumbent error ")
    assert lines[1].startswith("hpinsight forest ")
    assert lines[1].endswith(" -> 40 configurations")
    assert lines[2].split()[0] == "learning_rate"
    assert lines[3].startswith("SMAC's forest ")
    assert lines[5].startswith("saved run: 40 configurations, result in ")
    assert lines[6].startswith("Importance(learning_rate: ")
