"""What an interaction the trials cannot rule out could shift of a main effect
(``hpinsight.surrogates.gp._hidden.shift_shares``): against the posterior of the added
term of two parameters computed directly on a fine grid, and the verdicts and decisions
that read it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.linalg import cho_factor, cho_solve

import hpinsight as hp
from hpinsight._decisions import decide
from hpinsight._fanova_result import VERDICTS, verdict
from hpinsight._sampling import SamplingRecord
from hpinsight.surrogates.gp._hidden import SHIFT_BINS, SHIFT_LENGTHS, shift_shares
from hpinsight.surrogates.gp._kernel import Column, kernel_matrix


def _direct_shift(U: np.ndarray, ell: float, noise: float, c: float, grid: int = 40) -> float:
    """The share of column 0's main effect that a term of columns 0 and 1 (a product of
    squared exponentials of length ``ell``, prior variance ``c``), observed at ``U`` with
    ``noise``, leaves open: its posterior on a ``grid`` x ``grid`` tensor of midpoints,
    averaged over column 1, its expected variance over column 0 (no nodes)."""
    cols = [Column(False, 0.0, 1.0, 0, None, None)] * 2
    t = (np.arange(grid) + 0.5) / grid
    G = np.column_stack([np.repeat(t, grid), np.tile(t, grid)])  # row-major: column 0 outer
    ells = np.array([ell, ell])
    k_gu = c * kernel_matrix(cols, G, U, ells)
    factor = cho_factor(c * kernel_matrix(cols, U, U, ells) + noise * np.eye(len(U)), lower=True)
    C = c * kernel_matrix(cols, G, G, ells) - k_gu @ cho_solve(factor, k_gu.T)
    A = np.kron(np.eye(grid), np.full((1, grid), 1.0 / grid))  # the average over column 1
    marg = A @ C @ A.T
    w = np.full(grid, 1.0 / grid)
    return float(w @ np.diag(marg) - w @ marg @ w) / c


@pytest.mark.parametrize(("ell", "noise", "n"), [(0.3, 1e-2, 40), (0.3, 1.0, 40), (0.2, 1e-2, 40),
                                                 (0.2, 0.5, 600)])  # 600: binned (SHIFT_BINS)
def test_the_shift_equals_the_pair_terms_posterior_computed_directly(ell, noise, n):
    rng = np.random.default_rng(0)
    # trials in a corner of the plane and a few elsewhere, as an optimizer leaves them
    U = np.vstack([rng.uniform([0.0, 0.6], [0.4, 1.0], (n, 2)), rng.uniform(0, 1, (n // 7, 2))])
    assert len(np.unique(U[:, 0])) > SHIFT_BINS or n < SHIFT_BINS
    cols = (Column(False, 0.0, 1.0, 0, None, None),) * 2
    (share, partner), = shift_shares(cols, U, np.array([ell, 5.0 * ell]) if ell == SHIFT_LENGTHS[1]
                                     else np.array([ell, ell]), noise, 1.3, [0])
    assert partner == 1
    direct = _direct_shift(U, ell, noise, 1.3)
    assert direct > 0.01  # the corner leaves something open
    assert share == pytest.approx(direct, rel=0.05, abs=1e-4)


def test_an_empty_part_of_the_plane_leaves_more_open_than_a_covered_one():
    rng = np.random.default_rng(1)
    cols = (Column(False, 0.0, 1.0, 0, None, None),) * 3
    covered = rng.uniform(0, 1, (150, 3))
    corner = covered.copy()
    corner[:, 1] *= 0.3  # column 1 never above 0.3
    ells = np.full(3, 0.3)
    (open_covered, _), = shift_shares(cols, covered, ells, 1e-4, 1.0, [0])
    (open_corner, partner), = shift_shares(cols, corner, ells, 1e-4, 1.0, [0])
    assert open_covered < 1e-3
    assert open_corner > 20 * open_covered
    assert partner == 1  # the largest over the partners is the one whose range was left


def test_a_conditional_parameter_is_neither_checked_nor_a_partner():
    rng = np.random.default_rng(2)
    cols = (Column(False, 0.0, 1.0, 0, None, None),) * 3
    U = rng.uniform(0, 1, (60, 3))
    U[:55, 2] = np.nan  # active in 5 trials: its plane with any other is nearly empty
    ells = np.full(3, 0.3)
    (share, partner), (cond_share, cond_partner) = shift_shares(cols, U, ells, 1e-4, 1.0, [0, 2])
    assert partner == 1
    assert share < 1e-2
    assert cond_partner == -1
    assert math.isnan(cond_share)


@pytest.mark.parametrize(("low", "shift", "null", "expected"), [
    (0.10, None, 0.01, VERDICTS[0]),
    (0.10, 0.02, 0.01, VERDICTS[0]),   # (sqrt .10 - sqrt .02)^2 = 0.031 > 0.01
    (0.10, 0.05, 0.01, VERDICTS[1]),   # (0.316 - 0.224)^2 = 0.0086 <= 0.01
    (0.10, 0.20, 0.0, VERDICTS[1]),    # a shift larger than the lower end leaves 0
])
def test_a_main_effect_is_resolved_only_while_its_lower_end_less_the_shift_clears_the_null(
        low, shift, null, expected):
    std = 0.01
    mean = low + 1.6448536269514722 * std
    assert verdict(mean, std, null, None, shift) == expected


def _clustered(seed: int = 0, n: int = 200, cluster: bool = True) -> hp.TrialHistory:
    """An Ishigami-type function (``sin x1 (1 + 0.1 x3^4) + 2 sin^2 x2`` on the encoded
    ``[-pi, pi]``): x3's main effect over the space is 0, strong where x1 is low. With
    ``cluster``, 95 % of the trials sit where x1 is low and x3 at one edge, as TPE leaves
    them; else uniform."""
    space = hp.SearchSpace([hp.Float(n, 0, 1) for n in ("x1", "x2", "x3", "n0")])
    rng = np.random.default_rng(seed)
    U = rng.uniform(size=(n, 4))
    if cluster:
        k = rng.uniform(size=n)
        near = k < 0.95
        U[near, 0] = rng.uniform(0.15, 0.35, near.sum())
        U[near, 2] = rng.uniform(0.9, 1.0, near.sum())
        half = (k >= 0.95) & (k < 0.99)
        U[half, 0] = rng.uniform(0.0, 0.5, half.sum())
    x1, x2, x3 = (2 * math.pi * U[:, j] - math.pi for j in range(3))
    y = np.sin(x1) * (1 + 0.1 * x3**4) + 2 * np.sin(x2) ** 2
    return hp.TrialHistory(space, [dict(zip(space.names, map(float, row), strict=True)) for row in U], y)


@pytest.fixture(scope="module")
def clustered() -> hp.results.FanovaResult:
    return hp.fanova(_clustered(), seed=0)


def test_an_effect_seen_only_where_another_parameter_clusters_is_uncertain(clustered):
    x3 = clustered.importance("x3")
    # by its interval and null alone it would be resolved (truth: 0)
    assert verdict(x3.judged_share, x3.std, x3.null, x3.hidden) == VERDICTS[0]
    assert x3.verdict == VERDICTS[1]
    assert x3.shift_with in clustered.space.names
    assert x3.shift_with != "x3"
    assert x3.shift > x3.interval[0] / 4
    assert x3.to_dict()["shift_with"] == x3.shift_with


def test_trials_that_cover_the_planes_shift_nothing():
    result = hp.fanova(_clustered(cluster=False), seed=0)
    for name in ("x1", "x2"):
        imp = result.importance(name)
        assert imp.verdict == VERDICTS[0]
        assert imp.shift is not None
        assert imp.shift < 1e-3
        assert imp.shift_with is None


def test_a_capped_analysis_and_the_evaluators_model_check_nothing():
    history = _clustered()
    capped = hp.fanova(history, cap_quantile=0.25, seed=0)
    assert capped.shift_fractions is None
    means = hp.fanova(history, surrogate=hp.surrogates.means_only(hp.GP()), seed=0)
    assert means.shift_fractions is None


def test_the_decision_says_which_interaction_holds_it_back_and_a_fixed_one_is_released(clustered):
    out = decide(clustered)
    d = out["x3"]
    assert d.state == "unresolved"
    assert d.shift_with == clustered.importance("x3").shift_with
    assert f"plane with {d.shift_with} empty" in d.sentence
    assert json.loads(json.dumps(d.to_dict()))["shift_with"] == d.shift_with
    held = decide(clustered, sampling=SamplingRecord(fixed={"x3": 0.95}, decisions=(
        {"action": "fix", "params": {"x3": 0.95}, "after_trial": 99},)))
    assert held["x3"].state == "release"  # the trials show an effect: it is not kept fixed
