"""A small run of the Styblinski-Tang reproduction (benchmarks/bench_pdp_bias.py, three
seeds, d = 3): BO with a strong sampling bias leaves wider PDP bands than uniform
sampling, and confidence splitting narrows them in the incumbent's region."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_pdp_bias.py"


@pytest.mark.slow
def test_bias_widens_bands_and_splitting_narrows_them_near_the_incumbent() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--dims", "3", "--seeds", "3", "--gp", "fixed"],
        check=True, capture_output=True, text=True, timeout=600,
    ).stdout
    results = json.loads(out)["results"]
    strong = results["d=3, tau=0.1 (strong bias)"]
    uniform = results["d=3, uniform (no bias)"]
    assert strong["mmd"] > 3 * uniform["mmd"]  # the sampling bias, measured
    assert strong["mc"] > 1.2 * uniform["mc"]  # wider bands where BO exploited
    assert strong["nll"] > uniform["nll"]  # and a less reliable PDP
    for setting in results.values():
        assert setting["delta_mc_3"] > 0  # splitting helps in the incumbent's region
        assert setting["delta_mc_3"] >= setting["delta_mc_1"] - 1e-9
