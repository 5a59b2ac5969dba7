"""The README's main job, end to end: a real Optuna study on a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo_optuna_sqlite.py"


def test_demo_writes_study_and_report(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(tmp_path), "--trials", "60", "--every", "20"],
        check=True, capture_output=True, text=True,
    )
    assert proc.stderr.count("after ") == 3  # importances refreshed while the study ran
    report = json.loads((tmp_path / "report.json").read_text())
    effects = report["fanova"]["effects"]
    assert report["fanova"]["n_trials"] == 60
    assert effects[0]["params"] == ["learning_rate"]
    study = optuna.load_study(study_name="demo", storage=f"sqlite:///{tmp_path / 'study.db'}")
    assert len(study.trials) == 60
    assert study.best_value == pytest.approx(report["study"]["best_value"])
    assert "report:" in proc.stdout
