"""How large an effect the trials could hide (``hpinsight.surrogates.gp._hidden``),
against the posterior of the added term computed directly with its own kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import cho_factor, cho_solve

import hpinsight as hp
from hpinsight.surrogates.gp._hidden import HIDDEN_LENGTH, hidden_terms, nodes
from hpinsight.surrogates.gp._kernel import Column, kernel_matrix
from hpinsight.surrogates.gp._likelihood import signal_kernel, unit_members


def _direct_share(model: object, j: int, c: float, t: np.ndarray, w: np.ndarray) -> float:
    """The expected variance over ``(t, w)`` of what the trials leave uncertain of a term
    with kernel ``c k`` on column ``j`` alone, added to the model's covariance: the
    posterior covariance from one factorization of ``K + c k(u, u)`` (no nodes)."""
    U = model.X[0]
    n, d = U.shape
    units = unit_members(d, ())
    weights = model.additive_weights if model.additive_weights is not None else np.ones(d)
    K = signal_kernel(model.columns, U, U, units, model.length_scales, model.signal_variance,
                      weights * model.additive_variance)
    K[np.diag_indices(n)] += model.noise_variance
    col, ell = model.columns[j], np.array([HIDDEN_LENGTH])
    u = U[:, [j]]
    kt = c * kernel_matrix([col], t[:, None], u, ell)
    factor = cho_factor(K + c * kernel_matrix([col], u, u, ell), lower=True)
    C = c * kernel_matrix([col], t[:, None], t[:, None], ell) - kt @ cho_solve(factor, kt.T)
    return float(w @ np.diag(C) - w @ C @ w) / c


def _history(noise: float, z_high: float = 1.0, n: int = 120) -> hp.TrialHistory:
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Int("k", 1, 4),
                            hp.Categorical("opt", ["a", "b", "c"])])
    configs = space.sample(n, seed=2)
    for c in configs:
        c["z"] *= z_high
    rng = np.random.default_rng(0)
    y = [np.sin(6 * c["x"]) + 0.3 * c["k"] + noise * rng.standard_normal() for c in configs]
    return hp.TrialHistory(space, configs, y)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_shares_equal_the_added_terms_posterior_computed_directly(noise):
    history = _history(noise)
    result = hp.fanova(history, seed=0)
    model = result.model
    c = result.total_variance / model.y_scale**2
    shares = model.hidden_shares(result.total_variance)
    for j, col in enumerate(model.columns):
        # a fine grid of the measure for continuous columns (the module uses 12 nodes)
        t, w = nodes(col)
        if not col.categorical and col.points is None:
            t = (np.arange(400) + 0.5) / 400
            w = np.full(400, 1 / 400)
        direct = _direct_share(model, j, c, t, w)
        assert shares[j] == pytest.approx(direct, rel=0.03, abs=2e-4), model.columns[j]


def test_unvisited_range_and_noise_leave_more_hidden():
    dense = hp.fanova(_history(0.0), seed=0)
    names = dense.space.names
    z = names.index("z")
    covered = dense.hidden_fractions[z]
    unvisited = hp.fanova(_history(0.0, z_high=0.3), seed=0).hidden_fractions[z]
    noisy = hp.fanova(_history(1.0), seed=0).hidden_fractions[z]
    assert covered < 0.01
    assert unvisited > 0.1  # most of the prior's spread is left where no trial looked
    assert noisy > 5 * covered


def test_without_trials_nothing_is_ruled_out():
    # a term no trial constrains keeps its prior: the expected variance over the unit
    # range of a squared exponential of length scale HIDDEN_LENGTH
    col = Column(False, 0.0, 1.0, 0, None, None)
    U = np.full((5, 1), np.nan)  # inactive in every trial
    (term,) = hidden_terms([col], U, np.eye(5))
    # 1 - the double integral of exp(-(x - y)^2 / (2 l^2)) over the unit square
    ell = HIDDEN_LENGTH
    prior = 1.0 - (2 * ell**2 * (math.exp(-0.5 / ell**2) - 1)
                   + ell * math.sqrt(2 * math.pi) * math.erf(1 / (ell * math.sqrt(2))))
    assert term.share(2.0) == pytest.approx(prior, rel=1e-5)


def test_a_forest_and_a_capped_analysis_have_none():
    history = _history(0.0)
    assert hp.fanova(history, surrogate=hp.Forest(n_trees=8), seed=0).hidden_fractions is None
    capped = hp.fanova(history, seed=0, cap_quantile=0.5)
    assert capped.hidden_fractions is None
    assert all(i.hidden is None for i in capped.ranking())
    assert hp.fanova(history, seed=0).importance("z").to_dict()["hidden"] is not None
