"""Does a model miss an effect? The residual test of ``hpinsight.surrogates._residuals``
on errors with a known dependence, on errors with none, and on bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kruskal

from hpinsight.surrogates._residuals import RESIDUAL_GROUPS, residual_dependence


def test_errors_that_follow_a_v_are_found_and_others_are_not():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 3))
    # a V in column 0 that the model missed; columns 1 and 2 have nothing to do with it
    errors = 0.3 * np.abs(X[:, 0] - 0.5) + 0.02 * rng.standard_normal(200)
    p, spread = residual_dependence(X, [False, False, False], errors)
    assert p[0] < 1e-10
    assert p[1] > 1e-3
    assert p[2] > 1e-3
    # fifths of a V 0.3|x - .5| have means 0.3 x (0.4, 0.2, 0.05, 0.2, 0.4): their standard
    # deviation is 0.0402 (the V's own is 0.0433; the groups resolve most of it)
    fifths = 0.3 * np.array([0.4, 0.2, 0.05, 0.2, 0.4])
    assert spread[0] == pytest.approx(fifths.std(), rel=0.1)
    assert spread[1] < 0.3 * spread[0]
    assert spread[2] < 0.3 * spread[0]


def test_without_a_dependence_the_p_values_are_uniform():
    # the test's size: under the null about 5 % of p-values fall below 0.05
    rng = np.random.default_rng(1)
    p = np.concatenate([residual_dependence(rng.uniform(size=(100, 4)), [False] * 4,
                                            rng.standard_normal(100))[0] for _ in range(250)])
    assert 0.03 < float((p < 0.05).mean()) < 0.08
    assert 0.4 < float(np.median(p)) < 0.6


def test_inactive_rows_are_left_out_and_choices_are_their_own_groups():
    rng = np.random.default_rng(2)
    n = 150
    choice = rng.integers(0, 3, n).astype(float)
    cond = rng.uniform(size=n)
    errors = rng.standard_normal(n) * 0.1
    # the conditional column is active only where choice == 2; its inactive rows carry
    # large errors that must not count against it
    cond[choice != 2] = np.nan
    errors[choice != 2] += 5.0
    X = np.column_stack([choice, cond])
    p = residual_dependence(X, [True, False], errors)[0]
    assert p[0] < 1e-10  # the choice's categories differ
    assert p[1] > 1e-3  # among its active rows, nothing
    # a choice whose categories differ only in name: no difference
    p_null = residual_dependence(X[:, :1], [True], rng.standard_normal(n))[0]
    assert p_null[0] > 1e-3


def test_too_few_rows_or_one_value_give_no_test():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(size=40), np.full(40, 0.5), np.full(40, np.nan)])
    X[:35, 0] = np.nan  # 5 active rows: fewer than two groups of three
    p, spread = residual_dependence(X, [False, False, False], rng.standard_normal(40))
    assert np.isnan(p).all()
    assert np.isnan(spread).all()
    # a constant column among enough rows is one group: no test either
    assert np.isnan(residual_dependence(np.full((30, 1), 0.5), [False], rng.standard_normal(30))[0]).all()


def test_ties_stay_in_one_group():
    # an integer with three values: three groups, not RESIDUAL_GROUPS cut through ties
    rng = np.random.default_rng(4)
    x = rng.integers(0, 3, 300).astype(float)
    errors = np.where(x == 1, 0.1, 0.0) + rng.standard_normal(300)
    assert RESIDUAL_GROUPS > 3
    p = residual_dependence(x[:, None], [False], errors)[0]
    assert p[0] == pytest.approx(kruskal(*(errors[x == v] for v in range(3))).pvalue, rel=1e-12)


def test_mismatched_shapes_name_the_problem():
    with pytest.raises(ValueError, match="2 columns, 1 flags"):
        residual_dependence(np.zeros((10, 2)), [False], np.zeros(10))
    with pytest.raises(ValueError, match="for 10 rows"):
        residual_dependence(np.zeros((10, 1)), [False], np.zeros(9))


def test_both_models_report_what_their_held_out_errors_depend_on():
    import hpinsight as hp

    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("c", 0, 1), hp.Float("n", 0, 1)])
    configs = space.sample(300, seed=0)
    y = [10 * (c["a"] - 0.3) ** 2 + 0.3 * abs(c["c"] - 0.5) for c in configs]
    history = hp.TrialHistory(space, configs, y)
    # a forest's averaged steps round off the V's tip: its out-of-bag errors show the V
    forest = hp.fanova(history, surrogate=hp.Forest(), seed=0).model
    assert forest.residual_pvalues is not None
    assert forest.residual_spread is not None
    assert forest.residual_pvalues[1] < 1e-10
    assert forest.residual_pvalues[2] > 1e-3  # n does nothing
    assert 0.5 * 0.04 < forest.residual_spread[1] < 0.04  # at most the V's own (fifths: 0.040)
    gp = hp.fanova(history, seed=0).model
    assert gp.residual_pvalues is not None
    assert gp.residual_pvalues.shape == (3,)
    assert gp.residual_pvalues[2] > 1e-3


def test_leave_one_out_errors_are_those_of_the_posterior_without_the_row():
    # Rasmussen & Williams Eq. 5.12 against solving without each row, on a kernel of
    # columns of a real fit and any positive definite matrix
    import hpinsight as hp
    from hpinsight.surrogates.gp._fit import _leave_one_out

    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1)])
    configs = space.sample(30, seed=0)
    history = hp.TrialHistory(space, configs, [c["a"] + c["b"] ** 2 for c in configs])
    model = hp.fanova(history, seed=0).model
    X = space.encode(configs)
    rng = np.random.default_rng(0)
    P = rng.uniform(size=(30, 2))
    K = np.exp(-((P[:, None, :] - P[None, :, :]) ** 2).sum(-1) / 0.3) + 0.05 * np.eye(30)
    ys = rng.standard_normal(30)
    *_, errors, sds = _leave_one_out(model.columns, X, X, ys, K)
    for i in range(30):
        rest = np.delete(np.arange(30), i)
        w = np.linalg.solve(K[np.ix_(rest, rest)], K[rest, i])
        assert errors[i] == pytest.approx(ys[i] - w @ ys[rest], abs=1e-9)
        assert sds[i] == pytest.approx(np.sqrt(K[i, i] - K[i, rest] @ w), abs=1e-9)


def test_a_gp_s_leave_one_out_errors_are_per_row_given_in_objective_units():
    import hpinsight as hp
    from hpinsight.surrogates.gp._fit import fit_gp

    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1)])
    configs = space.sample(60, seed=1)
    X = space.encode(configs)
    y = np.array([(c["a"] - 0.3) ** 2 + 0.1 * c["b"] for c in configs])
    one = fit_gp(space, X, y, n_draws=4, seed=0)
    scaled = fit_gp(space, X, 1000.0 * y + 5.0, n_draws=4, seed=0)
    assert one.residuals is not None
    assert scaled.residuals is not None
    assert one.residual_sds is not None
    assert scaled.residual_sds is not None
    # the fit is of the standardized values: the same up to the optimizer's last digits
    np.testing.assert_allclose(scaled.residuals, 1000.0 * one.residuals, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(scaled.residual_sds, 1000.0 * one.residual_sds, rtol=1e-3)
    assert np.all(one.residual_sds > 0)
    # a study larger than max_rows: the rows left out of the fit have no error (NaN),
    # the others theirs, in the order given (the best tenth is always kept)
    part = fit_gp(space, X, y, n_draws=4, seed=0, max_rows=40)
    assert part.residuals is not None
    assert part.residuals.shape == (60,)
    assert int(np.isnan(part.residuals).sum()) == 20
    assert np.all(np.isfinite(part.residuals[np.argsort(y)[:4]]))
    assert np.array_equal(np.isnan(part.residuals), np.isnan(part.residual_sds))
