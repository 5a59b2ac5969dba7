"""The effect-removal benchmark's measurement: the effect it takes out of the data is the
fitted pure effect, checked against a function whose pure effects are known in closed
form; and its summary counts what it says it counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hpinsight as hp


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_effect_removal")


def test_the_removed_effect_is_the_pure_effect(bench):
    # 4 a b has main effects 2 a - 1 and 2 b - 1 under the uniform measure; its pure
    # interaction is 4 (a - 1/2)(b - 1/2). c - 1/2 is c's pure main effect
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1), hp.Float("c", 0, 1)])
    configs = space.sample(150, seed=0)
    y = [4 * c["a"] * c["b"] + c["c"] for c in configs]
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=0, max_order=2)
    X = history.encoded()
    pair = bench.fitted_effect(result, X, list(space.names), ("a", "b"))
    main = bench.fitted_effect(result, X, list(space.names), ("c",))
    true_pair = 4 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5)
    true_main = X[:, 2] - 0.5
    assert np.sqrt(np.mean((pair - true_pair) ** 2)) < 0.05 * true_pair.std()
    assert np.sqrt(np.mean((main - true_main) ** 2)) < 0.05 * true_main.std()


def test_the_summary_counts_effects_that_came_back(bench):
    rows = [{"key": "a x b", "truth": 0.0, "mean": 0.01, "regrown": 0.006, "verdict": "uncertain"},  # 60 %
            {"key": "a x c", "truth": 0.0, "mean": 0.01, "regrown": 0.0015, "verdict": "resolved"},  # 15 %
            {"key": "b x c", "truth": 0.4, "mean": 0.30, "regrown": 0.001, "verdict": "resolved"},  # 0.3 %
            {"key": "x x y", "truth": math.nan, "mean": 0.3, "regrown": 0.2, "verdict": "uncertain"},
            {"key": "a", "truth": 0.0, "mean": 0.2, "regrown": None, "verdict": "resolved"}]
    lines = bench.summary(rows).splitlines()
    assert "| main effects | 0 | 1 | 0 / 0 / 0 / 0 | 1 |" in lines
    assert "| pairs | 0 | 2 | 2 / 1 / 1 / 1 | 1 |" in lines
    assert "| pairs | > 0 | 2 | 1 / 1 / 1 / 1 | 1 |" in lines


def test_an_effect_counts_as_resolved_by_the_shadows_as_the_analysis_judged_it(bench):
    # the benchmark's "before the check" must be the library's verdict without regrown
    from hpinsight._fanova_result import verdict
    from hpinsight.results import Importance
    for mean, std, shadow in [(0.01, 0.002, 0.001), (0.01, 0.0095, 0.001), (0.0004, 0.0, 0.0),
                              (0.02, 0.001, 0.03), (0.3, 0.1, None)]:
        imp = Importance(("a", "b"), mean, std, shadow)
        assert bench.shadow_resolved(imp) == (verdict(mean, std, shadow) == "resolved")
