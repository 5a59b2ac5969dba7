"""Every example script in examples/ runs and prints real output (demo_optuna_sqlite.py is
exercised by optuna_runs/test_demo.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_quickstart_runs_and_ranks_x_first():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], check=True, capture_output=True, text=True
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("FanovaResult(n_trials=500")
    assert lines[1].split()[0] == "x"
    assert sum(line.startswith("lr=") for line in lines) == 5


def test_smac_example_watches_our_model_and_smacs_forest_and_reads_the_run_back():
    pytest.importorskip("smac")
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "smac_live_importance.py"), "--trials", "40"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("incumbent error ")
    assert lines[1].startswith("hpinsight GP ")  # the callback's default model, named as it is
    assert lines[1].endswith(" -> 40 configurations")
    assert lines[2].split()[0] == "learning_rate"
    assert lines[3].startswith("SMAC's forest ")
    assert lines[5].startswith("saved run: 40 configurations, result in ")
    # printed as every surface writes an effect: share ± std, then its verdict
    assert re.fullmatch(r"learning_rate: \d+\.\d % ± \d+\.\d+ %, (resolved|uncertain)", lines[6]), lines[6]


def test_tuning_risk_example_quick_mode_runs_both_algorithms():
    pytest.importorskip("optuna")
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "tuning_risk_sklearn.py"), "--quick"],
        check=True, capture_output=True, text=True, timeout=120,
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("datasets: iris, wine; 2 seeds, 3 trials, 2x2 nested CV")
    assert [line.split(":")[0] for line in lines if line.startswith("== ")] == [
        "== random forest", "== SVM"]
    assert sum(line.startswith("parameter ") for line in lines) == 2
    verdicts = [line.split() for line in lines if line.endswith(("agrees", "differs"))]
    assert [v[0] for v in verdicts] == [
        "bootstrap", "criterion", "max_features", "min_samples_leaf", "min_samples_split",
        "svc__C", "svc__gamma", "svc__tol", "svc__shrinking"]
    agree = sum(v[-1] == "agrees" for v in verdicts)
    assert lines[-1] == f"{agree} of 9 verdicts agree with the paper's Table 6"


def test_pdp_example_finds_a_narrower_incumbent_region_and_saves_the_figure(tmp_path):
    pytest.importorskip("optuna")
    pytest.importorskip("matplotlib")
    figure = tmp_path / "pdp.png"
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "pdp_confidence_regions.py"), "--out", str(figure)],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("most important: lr ")
    global_mc = float(lines[1].rsplit(" ", 1)[1])
    assert lines[2].startswith("incumbent's region: ")
    region_mc = float(lines[2].split("mean confidence ")[1].split()[0])
    assert region_mc < global_mc
    assert figure.stat().st_size > 10_000
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert lines[4].startswith("20 more trials in the region: best ")


def test_shrink_example_fixes_only_knobs_that_do_nothing():
    pytest.importorskip("optuna")
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "shrink_optuna.py")],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout
    lines = out.splitlines()
    assert lines[0] == "decision after trial 59: fix"
    fixed = dict(item.split("=") for item in lines[1].removeprefix("fixed: ").split(", "))
    assert {f"knob{i}" for i in range(6)} <= set(fixed)  # the six that barely matter
    kept = lines[2].removeprefix("kept: ").split(", ")
    assert {"lr", "depth"} <= set(kept)
    # shrink_to="auto" narrows what matters by default: lr and depth, to ranges that hold
    # their optima (1e-2 and 7)
    narrowed = dict(item.split(" to ") for item in lines[3].removeprefix("narrowed: ").split("; "))
    assert set(narrowed) <= set(kept)
    assert {"lr", "depth"} <= set(narrowed)
    for name, best in (("lr", 1e-2), ("depth", 7)):
        low, high = (float(v) for v in narrowed[name].strip("[]").split(", "))
        assert low <= best <= high, (name, low, high)
    reasons = [line.strip() for line in lines if line.startswith("  ")]
    assert len(reasons) == 10  # a reason per parameter
    # the rule's promise, checked on the objective itself: what it fixes costs no more than
    # its margin (the objective is a sum of one term per parameter, each 0 at its best)
    allowed = [re.search(r"; (\S+) allowed\)", r) for r in reasons]
    margin = float(next(m for m in allowed if m is not None).group(1))
    assert "dropout" not in fixed  # a small but resolved effect is never fixed
    true_cost = {"dropout": lambda v: (v - 0.2) ** 2, "tokenizer": lambda v: 0.0,
                 **{f"knob{i}": lambda v: 1e-3 * v for i in range(6)}}
    for name, value in fixed.items():
        assert true_cost[name](0.0 if name == "tokenizer" else float(value)) <= margin, name
    assert lines[-1].startswith("best value after 110 trials: ")
