"""The Gaussian-process surrogate: exact decomposition of its posterior mean."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

import hpinsight as hp
from hpinsight.results import Importance
from hpinsight.surrogates.gp import _decompose, decompose_gp, fit_gp


def _gauss_legendre(low: float, high: float, panels: int = 4, order: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights (summing to 1) on [low, high]."""
    x, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(low, high, panels + 1)
    nodes = np.concatenate([(a + b) / 2 + (b - a) / 2 * x for a, b in itertools.pairwise(edges)])
    weights = np.concatenate([(b - a) / 2 * w for a, b in itertools.pairwise(edges)])
    return nodes, weights / (high - low)


def _mixed_space() -> hp.SearchSpace:
    return hp.SearchSpace([
        hp.Float("x", 0.0, 2.0),
        hp.Int("k", 1, 5),
        hp.Categorical("c", ["a", "b", "c"]),
        hp.Float("lr", 1e-3, 1.0, log=True),
        hp.Int("w", 2, 9, log=True),
    ])


def _mixed_objective(c: dict) -> float:
    return (math.sin(3 * c["x"]) * c["k"] + 2.0 * (c["c"] == "b") + math.log(c["lr"]) * c["x"]
            + 0.3 * math.log(c["w"]) * (c["c"] == "a"))


def _measure_nodes() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The space's measure written out independently of hpinsight's measure code."""
    w_vals = np.arange(2, 10, dtype=float)
    w_mass = np.log(w_vals + 0.5) - np.log(w_vals - 0.5)
    nodes = [
        _gauss_legendre(0.0, 2.0)[0], np.arange(1, 6, dtype=float), np.arange(3, dtype=float),
        _gauss_legendre(math.log(1e-3), 0.0)[0], np.log(w_vals),
    ]
    weights = [
        _gauss_legendre(0.0, 2.0)[1], np.full(5, 0.2), np.full(3, 1 / 3),
        _gauss_legendre(math.log(1e-3), 0.0)[1], w_mass / w_mass.sum(),
    ]
    return nodes, weights


def _expect(f: np.ndarray, weights: list[np.ndarray], axes: tuple[int, ...]) -> np.ndarray:
    """E over ``axes`` of a function tabulated on the tensor grid, keeping dimensions."""
    for ax in axes:
        f = np.tensordot(f, weights[ax], axes=([ax], [0]))
        f = np.expand_dims(f, ax)
    return f


@pytest.fixture(scope="module")
def mixed_gp():
    space = _mixed_space()
    configs = space.sample(70, seed=1)
    # observation noise keeps the kernel matrix well conditioned; with a noise-free
    # objective the noise variance sits at its floor and the posterior weights reach
    # 1e4, which costs the quadratic forms about 7 of their 16 digits
    noise = np.random.default_rng(2).normal(0.0, 0.1, len(configs))
    y = np.array([_mixed_objective(c) for c in configs]) + noise
    return space, fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)


def test_decomposition_matches_brute_force_integration(mixed_gp) -> None:
    space, gp = mixed_gp
    assert gp.additive_variance > 0  # the fit uses both parts of the kernel here
    nodes, weights = _measure_nodes()
    _check_every_effect(gp, nodes, weights, space)



def test_total_variance_keeps_its_digits_when_the_posterior_weights_are_large() -> None:
    # a noise-free objective: the noise sits at its floor and the posterior weights reach
    # about 2e3 with alternating signs. The total variance must still agree with brute
    # force (Gauss-Legendre on 400 nodes of the uniform measure) to 1e-11: summing the
    # weights against the column's quadrature root keeps the digits that a product with
    # the formed (n, n) second moment loses (1.2e-9 off there)
    space = hp.SearchSpace([hp.Float("x", 0.0, 2.0)])
    configs = space.sample(40, seed=0)
    y = np.array([math.sin(3 * c["x"]) + 0.5 * c["x"] for c in configs])
    gp = fit_gp(space, space.encode(configs), y, n_draws=4, seed=0)
    assert np.abs(gp.beta).max() > 1e3
    t, w = np.polynomial.legendre.leggauss(400)
    f = gp.predict_per_draw((1.0 + t)[:, None])
    w = w / w.sum()
    mean = f @ w
    var = ((f - mean[:, None]) ** 2) @ w
    variances, total, means = decompose_gp(gp, [(0,)])
    np.testing.assert_allclose(means, mean, rtol=0, atol=1e-11)
    np.testing.assert_allclose(total, var, rtol=1e-11)
    np.testing.assert_allclose(variances[:, 0], var, rtol=1e-11)  # one column: all of it


def test_refits_leave_the_model_alone_and_decompose_exactly() -> None:
    # hyperparameters fit on halves of the rows: the model itself is the one fit without
    # them, digit for digit; each refit is one posterior mean on every row, and its
    # decomposition is exact like any model's
    space = _mixed_space()
    configs = space.sample(70, seed=1)
    noise = np.random.default_rng(2).normal(0.0, 0.1, len(configs))
    y = np.array([_mixed_objective(c) for c in configs]) + noise
    X = space.encode(configs)
    plain = fit_gp(space, X, y, n_draws=2, seed=0)
    gp = fit_gp(space, X, y, n_draws=2, seed=0, refits=3)
    np.testing.assert_array_equal(gp.beta, plain.beta)
    np.testing.assert_array_equal(gp.length_scales, plain.length_scales)
    assert plain.refits == ()
    assert len(gp.refits) == 3
    scales = np.array([r.length_scales for r in gp.refits])
    assert all(r.n_draws == 1 and r.X.shape[1] == len(configs) for r in gp.refits)
    assert not np.allclose(scales, gp.length_scales)  # other rows, other fits
    assert len({tuple(np.round(row, 6)) for row in scales}) == 3
    nodes, weights = _measure_nodes()
    _check_every_effect(gp.refits[0], nodes, weights, space)

def _additive_configs(seed: int = 0, n: int = 150):
    space = hp.SearchSpace([hp.Float(n_, -3, 3) for n_ in ("a", "b", "c", "d0", "d1")])
    configs = space.sample(n, seed=seed)
    y = [4 * c["a"] ** 2 + 2 * c["b"] ** 2 + c["c"] ** 2 for c in configs]
    return space, configs, y


def test_fanova_gp_additive_function_has_no_interactions_and_true_fractions() -> None:
    space, configs, y = _additive_configs()
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
    assert r.surrogate == hp.GP()
    assert r.surrogate.kind == "gp"
    # analytic: Var(k x^2) on U(-3, 3) is k^2 * 7.2, so fractions 16:4:1
    for name, truth in (("a", 16 / 21), ("b", 4 / 21), ("c", 1 / 21)):
        assert r.importance(name).mean == pytest.approx(truth, abs=0.03)
    for name in ("d0", "d1"):
        assert r.importance(name).mean < 1e-3
    assert max(imp.mean for imp in r.ranking(order=2)) < 0.01
    assert r.fit_r2 is not None
    assert r.fit_r2 > 0.99


def test_fanova_gp_same_seed_same_result_and_permutation() -> None:
    space, configs, y = _additive_configs(seed=3, n=60)
    r1 = hp.fanova(hp.TrialHistory(space, configs, y), seed=7)
    r2 = hp.fanova(hp.TrialHistory(space, configs, y), seed=7)
    np.testing.assert_array_equal(r1.variances, r2.variances)
    perm = hp.SearchSpace([space[n] for n in ("d1", "c", "a", "d0", "b")])
    rp = hp.fanova(hp.TrialHistory(perm, configs, y), seed=7)
    for name in space.names:
        assert rp.importance(name).mean == pytest.approx(r1.importance(name).mean, abs=0.02)


def test_categorical_choices_are_not_ordinal() -> None:
    """Relabelling the choices of a categorical leaves every importance unchanged."""
    choices = [f"c{i}" for i in range(12)]
    effect = dict(zip(choices, np.sin(np.arange(12) * 1.7) * 2, strict=True))
    space = hp.SearchSpace([hp.Categorical("cat", choices), hp.Float("x", 0, 1)])
    configs = space.sample(200, seed=0)
    y = [effect[c["cat"]] + 0.5 * c["x"] for c in configs]
    shuffled = hp.SearchSpace([hp.Categorical("cat", choices[::-1]), hp.Float("x", 0, 1)])
    r1 = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
    r2 = hp.fanova(hp.TrialHistory(shuffled, configs, y), seed=0, max_order=2)
    # equal up to the hyperparameter optimizer's tolerance (the gradient sums in another order)
    np.testing.assert_allclose(r1.variances, r2.variances, rtol=1e-4, atol=1e-9)
    assert r1.importance("cat").mean > 0.85


def test_constant_objective_gives_zeros() -> None:
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("k", 0, 3)])
    configs = space.sample(20, seed=0)
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning, match="Gaussian process"):
        r = hp.fanova(hp.TrialHistory(space, configs, [1.0] * 20), seed=0)
    assert r.is_constant
    assert r.importance("x").mean == 0.0


def test_conditional_space_imputes_per_draw() -> None:
    space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0, 1), hp.Float("z", 0, 1)],
        conditions=[hp.Condition("g", "m", values=["p"])],
    )
    configs = space.sample(120, seed=0)
    y = [(3 * (c["g"] - 0.3) ** 2 if c["m"] == "p" else 1.0) for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.GP(n_draws=4), seed=0)
    X = r.model.X
    inactive = np.isnan(space.encode(configs)[:, 1])
    assert inactive.any()
    # a fresh imputation in every draw, the active entries untouched
    assert not np.array_equal(X[0][inactive, 1], X[1][inactive, 1])
    np.testing.assert_array_equal(X[0][~inactive, 1], X[1][~inactive, 1])
    assert r.importance("z").mean < 0.01
    assert r.importance("g").mean > 0.05


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"surrogate": "svm"}, TypeError, "'surrogate' parameter of fanova takes a model object"),
        ({"surrogate": 3}, TypeError, r"'surrogate' parameter of fanova must be hp\.GP\(\)"),
    ],
    ids=["unknown-surrogate", "not-a-model"],
)
def test_fanova_surrogate_errors(kwargs, error, match) -> None:
    space, configs, y = _additive_configs(n=10)
    with pytest.raises(error, match=match):
        hp.fanova(hp.TrialHistory(space, configs, y), **kwargs)


def test_a_gp_without_draws_is_refused_where_it_is_made() -> None:
    with pytest.raises(ValueError, match="'n_draws' parameter of GP must be >= 1"):
        hp.GP(n_draws=0)
    with pytest.raises(TypeError, match="'shadows' parameter of GP must be True or False"):
        hp.GP(shadows="yes")
    with pytest.raises(ValueError, match="'refits' parameter of GP must be 0 or at least 2"):
        hp.GP(refits=1)
    with pytest.raises(ValueError, match="'refits' parameter of GP must be >= 0"):
        hp.GP(refits=-2)


def test_one_trial_is_called_too_little_data_not_a_constant_objective() -> None:
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning,
                      match=r"\(1 trial\(s\) used\): one trial shows no variation \(too little data, "
                            r"not a constant objective\); run more trials"):
        result = hp.fanova(hp.TrialHistory(space, [{"x": 0.3}], [1.0]))
    assert result.is_constant


def test_refits_widen_every_spread_by_the_hyperparameters_spread() -> None:
    # the std is sqrt(spread over draws^2 + variance over refits), each refit's share
    # computed here from its own exact decomposition; the means stay the draws'
    from hpinsight.surrogates.gp import decompose_gp

    space, configs, y = _additive_configs(n=60)
    history = hp.TrialHistory(space, configs, y)
    plain = hp.fanova(history, surrogate=hp.GP(n_draws=4, refits=0), seed=3, max_order=2)
    wide = hp.fanova(history, surrogate=hp.GP(n_draws=4, refits=4), seed=3, max_order=2)
    # the fourth refit has the product part alone: on a sum of main effects it predicts
    # the other half worse than the whole kernel's refits, and is left out
    assert len(wide.model.refits) == 3
    assert all(refit.additive_variance > 1e-3 for refit in wide.model.refits)
    assert plain.refit_fractions is None
    assert hp.GP(refits=3).to_dict()["refits"] == 3
    assert repr(hp.GP(refits=3)) == "GP(refits=3)"
    names = list(space.names)
    widened = 0
    for params in [(n,) for n in names] + [tuple(p) for p in itertools.combinations(names, 2)]:
        a, b = plain.importance(*params), wide.importance(*params)
        subset = tuple(sorted(names.index(n) for n in params))
        shares = []
        for refit in wide.model.refits:
            v, total, _ = decompose_gp(refit, [subset])
            shares.append(v[0, 0] / total[0])
        assert b.mean == pytest.approx(a.mean, rel=1e-12, abs=1e-15)
        assert b.std == pytest.approx(math.sqrt(a.std**2 + np.var(shares, ddof=1)), rel=1e-9, abs=1e-15)
        widened += b.std > a.std * 1.01
    assert widened >= 2  # the hyperparameters' spread is not negligible on 60 trials


def test_a_refit_that_finds_no_signal_gives_no_shares() -> None:
    # a refit's shares count only while its prediction varies by more than FLAT_REFIT of
    # the model's variance: below it they are those of next to nothing (arbitrary); each
    # refit's own total decides, whatever the other refits'
    from hpinsight.surrogates.gp import refit_fractions
    from hpinsight.surrogates.gp._decompose import FLAT_REFIT

    space, configs, y = _additive_configs(n=60)
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.GP(n_draws=2, refits=3), seed=3)
    subsets = [(0,), (1,), (2,)]
    totals = np.array([decompose_gp(refit, subsets)[1][0] for refit in result.model.refits])
    shares = refit_fractions(result.model, subsets, total=0.0)
    assert shares is not None
    assert np.isfinite(shares).all()
    assert shares[:, 0] == pytest.approx([decompose_gp(r, [(0,)])[0][0, 0] / t
                                          for r, t in zip(result.model.refits, totals, strict=True)])
    # a model variance that puts the smallest refit just below the line and the others above
    low = np.sort(totals)
    assert low[0] < low[1]
    between = (low[0] + low[1]) / 2 / FLAT_REFIT
    cut = refit_fractions(result.model, subsets, total=between)
    assert cut is not None
    flat = totals <= FLAT_REFIT * between
    assert flat.sum() == 1
    assert np.isnan(cut[flat]).all()
    np.testing.assert_array_equal(cut[~flat], shares[~flat])
    assert np.isnan(refit_fractions(result.model, subsets, total=low[-1] / FLAT_REFIT)).all()
    # the analysis draws the line at its own variance: on 60 clean trials every refit
    # finds the signal
    np.testing.assert_array_equal(np.isfinite(result.refit_fractions), True)


def test_an_analysis_whose_refits_mostly_find_no_signal_judges_no_effect() -> None:
    # more than NO_SIGNAL_SHARE of the refits without signal: the trials' differences may
    # be noise, and neither "resolved" nor "nothing" is claimed; at the share itself the
    # verdicts are the rule's, read from the remaining refits' spread
    from hpinsight._fanova_result import NO_SIGNAL_SHARE, verdict

    space, configs, y = _additive_configs(n=60)
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.GP(n_draws=4, refits=8), seed=3)
    n = result.n_refits  # those of the 8 that predict the other half well (see _plausible)
    assert n >= 4
    assert result.n_flat_refits == 0
    assert not result.signal_doubtful
    verdicts = {i.params: i.verdict for i in result.ranking()}
    assert "resolved" in set(verdicts.values())
    assert set(verdicts.values()) & {"indistinguishable from nothing", "negligible"}  # no effect
    at_share = int(NO_SIGNAL_SHARE * n)
    for flat, doubtful in ((at_share, False), (at_share + 1, True)):
        shares = np.array(result.refit_fractions)
        shares[:flat] = np.nan  # as refit_fractions leaves a refit without signal
        doubted = dataclasses.replace(result, refit_fractions=shares)
        assert doubted.n_flat_refits == flat
        assert doubted.signal_doubtful is doubtful
        assert doubted.to_dict()["signal_doubtful"] is doubtful
        for imp in doubted.ranking():
            kept = shares[flat:, result.subsets.index(imp.params)]
            draws = result.fractions[result.valid_draws, result.subsets.index(imp.params)]
            assert imp.mean == pytest.approx(draws.mean())
            assert imp.std == pytest.approx(math.sqrt(draws.var() + kept.var(ddof=1)))
            assert imp.verdict == ("uncertain" if doubtful else verdict(imp.mean, imp.std, imp.null, imp.hidden))


def test_pure_noise_whose_refits_find_no_signal_is_called_uncertain_throughout() -> None:
    # a fit of 60 trials of pure noise: half its refits put everything in the noise, and
    # the model's own shares (0.71 on x0) are not claimed either way
    from hpinsight._fanova_result import NO_SIGNAL_SHARE

    space = hp.SearchSpace([hp.Float(f"x{i}", 0.0, 1.0) for i in range(4)])
    configs = space.sample(60, seed=3)
    y = np.random.default_rng(3).normal(size=60)
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    assert result.n_flat_refits > NO_SIGNAL_SHARE * result.n_refits
    assert result.signal_doubtful
    assert {i.verdict for i in result.ranking()} == {"uncertain"}


def test_a_capped_analysis_calls_nothing_only_where_all_trials_do() -> None:
    # among the best 25 % of 60 trials of 4a^2 + 2b^2 + c^2, the capped fit gives c next
    # to nothing, which its share alone would call nothing; c's share of the capped
    # objective is real (brute force below), and all trials resolve it
    from hpinsight._fanova_result import verdict

    nothing = "indistinguishable from nothing"
    space, configs, y = _additive_configs(n=60)
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=3)
    capped = hp.fanova(history, seed=3, cap_quantile=0.25)
    assert capped.cap_value is not None
    assert not capped.signal_doubtful
    grid = np.linspace(-3, 3, 241)
    a, b, c = np.meshgrid(grid, grid, grid, indexing="ij")
    g = np.minimum(4 * a**2 + 2 * b**2 + c**2, capped.cap_value)
    true_c = g.mean(axis=(0, 1)).var() / g.var()
    assert true_c > 0.01
    raw = {i.params: verdict(i.mean, i.std, i.null, i.hidden) for i in capped.ranking()}
    assert raw[("c",)] == nothing
    assert result.importance("c").verdict == "resolved"
    # alone, a capped analysis calls nothing nothing
    assert nothing not in {i.verdict for i in capped.ranking()}
    assert capped.nothing_over_all is None
    judged = capped.beside(result)
    assert judged.nothing_over_all == {frozenset({"d0"}), frozenset({"d1"})}
    assert judged.to_dict()["nothing_over_all"] == [["d0"], ["d1"]]
    for imp in judged.ranking():
        over_all = result.importance(*imp.params).verdict
        assert imp.verdict == (raw[imp.params] if over_all == nothing or raw[imp.params] != nothing
                               else "uncertain")
        assert (imp.mean, imp.std) == (capped.importance(*imp.params).mean,
                                       capped.importance(*imp.params).std)
    assert judged.importance("c").verdict == "uncertain"
    assert judged.importance("d0").verdict == nothing
    np.testing.assert_array_equal(judged.variances, capped.variances)
    assert judged.beside(result).nothing_over_all == judged.nothing_over_all


def test_beside_names_what_it_needs() -> None:
    space, configs, y = _additive_configs(n=40)
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=3, surrogate=hp.GP(n_draws=2, refits=0))
    capped = hp.fanova(history, seed=3, cap_quantile=0.5, surrogate=hp.GP(n_draws=2, refits=0))
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="judges a capped analysis"):
        result.beside(result)
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="uncapped"):
        capped.beside(capped)
    with pytest.raises(hp.exceptions.InvalidArgumentTypeError, match="got dict"):
        capped.beside({})  # type: ignore[arg-type]
    fewer = hp.fanova(hp.TrialHistory(space, configs[:30], y[:30]), seed=3,
                      surrogate=hp.GP(n_draws=2, refits=0))
    with pytest.raises(hp.exceptions.InvalidDataError, match=r"of 40 trials .* of 30 trials"):
        capped.beside(fewer)
    # the same trials, but read the other way or as another objective
    flipped = hp.fanova(hp.TrialHistory(space, configs, y, direction="maximize"), seed=3,
                        surrogate=hp.GP(n_draws=2, refits=0))
    with pytest.raises(hp.exceptions.InvalidDataError, match=r"minimize 'objective'.*maximize"):
        capped.beside(flipped)
    other = hp.fanova(hp.TrialHistory(space, configs, y, objective_name="loss"), seed=3,
                      surrogate=hp.GP(n_draws=2, refits=0))
    with pytest.raises(hp.exceptions.InvalidDataError, match="'loss'"):
        capped.beside(other)


def test_tied_best_trials_leave_a_constant_capped_objective_that_shows_no_absence() -> None:
    # 40 trials, the best of which tie: y = max(a, 0.5) is 0.5 wherever a < 0.5, so the
    # objective capped at its 25 % quantile is constant. Among the best, `a` is flat, but
    # over all trials it acts: "nothing" among the best would contradict the analysis of
    # all trials, which the page shows beside it; `b` does nothing anywhere
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1)])
    configs = space.sample(40, seed=0)
    y = [max(c["a"], 0.5) for c in configs]
    assert sum(v == 0.5 for v in y) > 10  # more than a quarter tie at the best
    history = hp.TrialHistory(space, configs, y)
    result = hp.fanova(history, seed=0)
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning,
                      match=r"capped at 0.5, the trials' values are all equal \(the best ones "
                            r"tie there"):
        capped = hp.fanova(history, seed=0, cap_quantile=0.25)
    assert capped.is_constant
    nothing = "indistinguishable from nothing"
    assert result.importance("a").verdict == "resolved"
    assert result.importance("b").verdict == nothing
    assert {i.verdict for i in capped.ranking()} == {"uncertain"}  # alone: no absence
    judged = capped.beside(result)
    assert judged.importance("a").verdict == "uncertain"
    assert judged.importance("b").verdict == nothing
    assert judged.to_dict()["nothing_over_all"] == [["b"]]


def test_refits_widen_a_marginals_band_as_they_widen_its_importance() -> None:
    # each refit's marginal of `a` by brute force: its prediction averaged over the
    # other four parameters' measure (composite Gauss-Legendre on their tensor grid)
    space, configs, y = _additive_configs(n=60)
    history = hp.TrialHistory(space, configs, y)
    plain = hp.fanova(history, surrogate=hp.GP(n_draws=4, refits=0), seed=3).marginal("a", grid_size=7)
    wide_result = hp.fanova(history, surrogate=hp.GP(n_draws=4, refits=3), seed=3)
    wide = wide_result.marginal("a", grid_size=7)
    np.testing.assert_array_equal(wide.mean, plain.mean)
    nodes, weights = _gauss_legendre(-3.0, 3.0, panels=2, order=6)
    grid = np.array(np.meshgrid(*[nodes] * 4, indexing="ij")).reshape(4, -1).T
    w = np.prod(np.array(np.meshgrid(*[weights] * 4, indexing="ij")).reshape(4, -1), axis=0)
    curves = []
    for refit in wide_result.model.refits:
        curve = []
        for a in wide.encoded_grid[0]:
            X = np.column_stack((np.full(len(grid), a), grid))
            curve.append(float(w @ refit.predict_per_draw(X)[0]))
        curves.append(curve)
    expected = np.sqrt(plain.std**2 + np.var(np.array(curves), axis=0, ddof=1))
    np.testing.assert_allclose(wide.std, expected, rtol=1e-6)
    assert (wide.std > plain.std * 1.01).any()


def test_prediction_at_an_inactive_entry_averages_over_its_measure() -> None:
    space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 4)],
        conditions=[hp.Condition("g", "m", values=["p"])],
    )
    configs = space.sample(150, seed=3)
    y = [(math.sin(3 * c["g"]) if c["m"] == "p" else 1.0) + 0.2 * c["k"] for c in configs]
    gp = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.GP(n_draws=3), seed=0).model
    query = space.encode([{"m": "q", "k": 2}, {"m": "p", "g": 0.7, "k": 2}])
    got = gp.predict_per_draw(query)
    # g drawn from its measure (uniform on [0, 2]) by quadrature written out here
    nodes, weights = _gauss_legendre(0.0, 2.0, panels=8)
    filled = np.repeat(query[:1], nodes.size, axis=0)
    filled[:, 1] = nodes
    np.testing.assert_allclose(got[:, 0], gp.predict_per_draw(filled) @ weights, rtol=0, atol=1e-9)
    # an active entry is predicted as it is
    assert not np.allclose(got[:, 1], got[:, 0])


def _svc_tpe_history() -> hp.TrialHistory:
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "svc_tpe_study.json").read_text())
    params = []
    for name, kind, *rest in doc["space"]:
        if kind == "categorical":
            params.append(hp.Categorical(name, rest[0]))
        else:
            low, high, log = rest
            params.append((hp.Int if kind == "int" else hp.Float)(name, low, high, log=log))
    space = hp.SearchSpace(params)
    return hp.TrialHistory(space, tuple(t["params"] for t in doc["trials"]),
                           np.array([t["value"] for t in doc["trials"]]))


def test_rare_choice_holding_diverged_trials_is_not_important() -> None:
    # A real TPE study: 4 of 150 SVC runs diverged (error 0.37 against 0.02-0.04), and
    # two of them are the only trials with unused_tag="x". A fit on the raw objective
    # let that choice "explain" them (0.15 of the variance); the parameters that do
    # nothing must stay near zero and C and gamma must lead.
    history = _svc_tpe_history()
    r = hp.fanova(history, seed=0)
    nothing = sum(r.importance(n).mean for n in ("data_shuffle_seed", "unused_scale", "unused_tag", "tol"))
    matter = r.importance("C").mean + r.importance("gamma").mean
    assert nothing < 0.05 * (nothing + matter)
    assert {i.params[0] for i in r.ranking(order=1)[:2]} == {"C", "gamma"}


def test_effects_no_larger_than_a_shadow_are_indistinguishable_from_nothing() -> None:
    space = hp.SearchSpace([hp.Float("a", -3, 3), hp.Float("b", -3, 3), hp.Int("k", 0, 50),
                            hp.Categorical("tag", ["x", "y", "z"]), hp.Float("u", 0, 1)])
    configs = space.sample(120, seed=4)
    rng = np.random.default_rng(0)
    y = [4 * c["a"] ** 2 + c["b"] ** 2 + rng.normal(0, 0.3) for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
    null = r.shadow_fraction(1)
    assert null is not None
    assert 0.0 <= null < r.importance("b").mean
    assert r.shadow_fraction(2) is not None
    for name in ("a", "b"):
        assert r.importance(name).verdict == "resolved"
    for name in ("k", "tag", "u"):
        imp = r.importance(name)
        assert imp.verdict == "indistinguishable from nothing", imp
        assert imp.shadow == null
    assert r.importance("a", "b").verdict == "indistinguishable from nothing"  # additive
    assert r.to_dict()["effects"][0]["verdict"] == "resolved"
    # the shadows decide the verdicts only: the importances are the model's without them
    plain = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2, surrogate=hp.GP(shadows=False))
    np.testing.assert_array_equal(plain.fractions, r.fractions)
    assert plain.shadow_fraction(1) is None


def _pair_study(n: int = 120) -> tuple[hp.SearchSpace, list[dict], np.ndarray, np.ndarray]:
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Float("b", 0, 1), hp.Float("c", 0, 1)])
    configs = space.sample(n, seed=3)
    a, b, c = (np.array([cf[k] for cf in configs]) for k in "abc")
    pure = 8 * (a - 0.5) * (b - 0.5)
    return space, configs, a + c + pure, pure


def test_a_real_interaction_is_gone_once_it_is_taken_out_and_stays_resolved() -> None:
    space, configs, y, _ = _pair_study()
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
    pair = r.importance("a", "b")
    assert pair.verdict == "resolved"
    assert pair.regrown is not None
    assert pair.regrown < 0.1 * pair.mean  # the fitted interaction took all of it
    assert pair.null == max(pair.shadow, pair.regrown)
    # only pairs the shadows would resolve are checked
    assert r.importance("a", "c").regrown is None
    assert r.importance("a").regrown is None
    assert r.to_dict()["effects"][[e["params"] for e in r.to_dict()["effects"]].index(["a", "b"])]["regrown"] \
        == pair.regrown
    frame = r.to_frame().set_index("params")
    assert frame.loc["a x b", "regrown"] == pair.regrown
    assert math.isnan(frame.loc["a x c", "regrown"])  # not checked


def test_an_interaction_the_data_do_not_hold_comes_back_when_the_fitted_one_is_taken_out() -> None:
    # The check's arithmetic: a model that fitted an interaction, asked about values
    # that do not hold it, leaves minus that interaction in them, and it comes back
    # with about the share the model gave it.
    from hpinsight.surrogates.gp import regrown_shares

    space, configs, y, pure = _pair_study()
    history = hp.TrialHistory(space, configs, y)
    r = hp.fanova(history, seed=0, max_order=2)
    X = history.encoded()
    centre = float(r.draw_means.mean())
    real, = regrown_shares(r.model, space, X, y, [(0, 1)], centre, 0)
    made_up, = regrown_shares(r.model, space, X, y - pure, [(0, 1)], centre, 0)
    share = r.importance("a", "b").mean
    assert real < 0.1 * share
    assert made_up > 0.5 * share


def test_a_pair_that_comes_back_is_judged_against_what_came_back() -> None:
    space, configs, y, _ = _pair_study()
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
    i = r.subsets.index(("a", "b"))
    pair = r.importance("a", "b")
    for regrown, expected in [(pair.mean - 0.5 * pair.std, "uncertain"), (pair.mean * 1.01, "indistinguishable from nothing"),
                              (0.0, "resolved")]:
        shares = np.full(len(r.subsets), np.nan)
        shares[i] = regrown
        checked = dataclasses.replace(r, regrown_fractions=shares)
        assert checked.importance("a", "b").verdict == expected
        assert [imp.verdict for imp in checked.ranking(2) if imp.params == ("a", "b")] == [expected]
        assert checked.importance("a").verdict == r.importance("a").verdict


def test_the_check_is_part_of_the_shadows() -> None:
    space, configs, y, _ = _pair_study()
    plain = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2, surrogate=hp.GP(shadows=False))
    assert plain.regrown_fractions is None
    assert plain.importance("a", "b").regrown is None
    forest = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2, surrogate=hp.Forest(n_trees=8))
    assert forest.regrown_fractions is None


@pytest.mark.parametrize(
    ("mean", "std", "shadow", "verdict"),
    [
        (0.3, 0.1, 0.01, "resolved"),
        (0.3, 0.35, 0.01, "uncertain"),  # the spread reaches 0
        # mean - std clears the null, the 90 % interval's lower end (mean - 1.645 std) does not
        (0.3, 0.2, 0.01, "uncertain"),
        (0.3, 0.17, 0.01, "resolved"),
        (0.0042, 0.0039, 0.0036, "uncertain"),  # above the null by less than its std
        (0.003, 0.001, 0.0036, "indistinguishable from nothing"),  # below the null
        # below the 0.05 % floor, its interval clear of the null: shown, too small to count
        (0.0004, 0.0, None, "negligible"),
        (0.0004, 0.0001, 0.0001, "negligible"),  # above a tiny null, too
        (0.0004, 0.0003, 0.0001, "indistinguishable from nothing"),  # its interval reaches it
        (0.2, 0.1, None, "resolved"),
        # below the null, but the fits the trials support reach 5 % above it
        (0.0, 0.2, 1e-6, "uncertain"),
        (0.0002, 0.06, None, "uncertain"),
        (0.0, 0.03, 1e-6, "indistinguishable from nothing"),
        (0.0, 0.04, 1e-6, "uncertain"),  # mean + std stays below 5 %, the interval does not
        (0.3, 0.03, 0.303, "indistinguishable from nothing"),  # came back: judged above its null
        (0.3, 0.04, 0.303, "uncertain"),
    ],
)
def test_verdict_rule(mean, std, shadow, verdict) -> None:
    from hpinsight._fanova_result import verdict as _verdict

    assert _verdict(mean, std, shadow) == verdict
    imp = Importance(("a",), mean, std, shadow, verdict)
    low, high = imp.interval
    assert low == pytest.approx(max(mean - 1.6449 * std, 0.0), abs=1e-4)
    assert high == pytest.approx(min(mean + 1.6449 * std, 1.0), abs=1e-4)
    assert imp.to_dict()["low"] == low
    assert imp.to_dict()["high"] == high


def test_an_interval_never_reaches_above_the_whole() -> None:
    # a share is at most 1: the demo's learning_rate among the best read high 1.088
    imp = Importance(("a",), 0.8, 0.2, 0.01, "uncertain")
    assert imp.interval == (pytest.approx(0.8 - 1.6448536 * 0.2), 1.0)
    assert imp.to_dict()["high"] == 1.0


def test_a_forest_has_no_null_and_its_verdicts_follow_the_spread() -> None:
    space, configs, y = _additive_configs(n=80)
    r = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=8), seed=0)
    assert r.shadow_fraction(1) is None
    for imp in r.ranking():
        expected = ("indistinguishable from nothing" if imp.mean < 1e-4
                    else "uncertain" if imp.mean - 1.6449 * imp.std <= 0 else "resolved")
        assert imp.verdict == expected
        assert imp.shadow is None


def _check_every_effect(gp, nodes, weights, space) -> None:
    """Every draw's mean, total variance, effects of every order and marginals against
    brute-force integration of its predictions over the tensor grid ``nodes``: for the
    fitted model, for its product part alone and with its additive part five times as
    heavy as the product part (the numbers must be exact for any weights)."""
    units = len(gp.unit_members)
    for additive in (gp.additive_variance, 0.0, 5.0 * gp.signal_variance * units):
        _check_one_weighting(dataclasses.replace(gp, additive_variance=additive), nodes, weights, space)
    # each unit its own additive variance, one of them none
    unequal = np.linspace(2.0, 0.0, units) if units > 1 else np.array([3.0])
    _check_one_weighting(dataclasses.replace(gp, additive_variance=2.0 * gp.signal_variance * units,
                                             additive_weights=unequal), nodes, weights, space)


def _check_one_weighting(gp, nodes, weights, space) -> None:
    d = len(space)
    mesh = np.meshgrid(*nodes, indexing="ij")
    grid = np.column_stack([m.ravel() for m in mesh])
    pred = gp.predict_per_draw(grid).reshape(gp.n_draws, *[n.size for n in nodes])
    subsets = [s for r in range(1, d + 1) for s in itertools.combinations(range(d), r)]
    variances, total, means = decompose_gp(gp, subsets)
    # the total variance summed over blocks of a few rows (the last one shorter), as it
    # is at a few hundred rows and more
    n = gp.X.shape[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_decompose, "_BLOCK_ENTRIES", next(r for r in (3, 4, 5, 7) if n % r) * n)
        blocked = decompose_gp(gp, [])[1]
    every = tuple(range(d))
    for b in range(gp.n_draws):
        f = pred[b]
        f0 = _expect(f, weights, every).item()
        assert means[b] == pytest.approx(f0, rel=1e-10, abs=1e-10)
        tot = _expect((f - f0) ** 2, weights, every).item()
        assert total[b] == pytest.approx(tot, rel=1e-9)
        assert blocked[b] == pytest.approx(tot, rel=1e-9)
        comps: dict[tuple[int, ...], np.ndarray] = {(): np.full([1] * d, f0)}
        for k, s in enumerate(subsets):
            g = _expect(f, weights, tuple(a for a in every if a not in s))
            for t, c in comps.items():
                if set(t) < set(s):
                    g = g - c
            comps[s] = g
            v = _expect(np.broadcast_to(g, f.shape) ** 2, weights, every).item()
            assert abs(variances[b, k] - v) <= 1e-9 * tot, s
        assert variances[b].sum() == pytest.approx(total[b], rel=1e-9)
    for cols in [(j,) for j in every] + list(itertools.combinations(every, 2)):
        exact = gp.marginal_per_draw(cols, [nodes[c] for c in cols])
        rest = tuple(a for a in every if a not in cols)
        for b in range(gp.n_draws):
            ref = np.squeeze(_expect(pred[b], weights, rest), axis=rest)
            np.testing.assert_allclose(exact[b], ref, rtol=1e-9, atol=1e-9 * math.sqrt(total[b]))
    # the two columns of a pair in either order give the same marginal, transposed
    swapped = gp.marginal_per_draw((1, 0), [nodes[1], nodes[0]])
    np.testing.assert_allclose(swapped, np.swapaxes(gp.marginal_per_draw((0, 1), nodes[:2]), 1, 2))


def test_conditional_block_is_exact_without_imputation() -> None:
    # the child's kernel factor knows when it is inactive; the block (m, g) is integrated
    # by enumerating m, and nothing is imputed, so every draw has the same inputs
    space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5)],
        conditions=[hp.Condition("g", "m", values=["p"])],
    )
    configs = space.sample(80, seed=5)
    noise = np.random.default_rng(1).normal(0.0, 0.1, len(configs))
    y = np.array([(math.sin(2 * c["g"]) if c["m"] == "p" else 0.5) + 0.3 * c["k"]
                  for c in configs]) + noise
    gp = fit_gp(space, space.encode(configs), y, n_draws=3, seed=0)
    assert gp.shared_inputs
    assert [b.members for b in gp.blocks] == [(0, 1)]
    gl = _gauss_legendre(0.0, 2.0)
    nodes = [np.arange(2, dtype=float), gl[0], np.arange(1, 6, dtype=float)]
    weights = [np.full(2, 0.5), gl[1], np.full(5, 0.2)]
    _check_every_effect(gp, nodes, weights, space)


def test_cross_pair_variances_are_decompose_gps_pairs() -> None:
    # one product per left column instead of a pass per pair: the same numbers as the
    # decomposition itself, with a categorical, log and stepped columns (roots), and a
    # conditional block (through the decomposition); a column with itself gives 0
    from hpinsight.surrogates.gp._decompose import cross_pair_variances

    space = _mixed_space()
    configs = space.sample(70, seed=1)
    y = np.array([_mixed_objective(c) for c in configs]) + np.random.default_rng(2).normal(0.0, 0.1, 70)
    block_space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5), hp.Float("u", 0, 1)],
        conditions=[hp.Condition("g", "m", values=["p"])])
    block_configs = block_space.sample(80, seed=5)
    block_y = np.array([(math.sin(2 * c["g"]) if c["m"] == "p" else 0.5) + 0.3 * c["k"] * c["u"]
                        for c in block_configs]) + np.random.default_rng(1).normal(0.0, 0.1, 80)
    for sp, cf, yy, left, right in [(space, configs, y, [0, 1, 2], [2, 3, 4]),
                                    (block_space, block_configs, block_y, [0, 1, 2], [2, 3])]:
        gp = fit_gp(sp, sp.encode(cf), yy, n_draws=1, seed=0)
        got = cross_pair_variances(gp, left, right)
        pairs = [(i, j) for i in left for j in right if i != j]
        expected, _, _ = decompose_gp(gp, pairs)
        for (i, j), v in zip(pairs, expected[0], strict=True):
            assert got[left.index(i), right.index(j)] == pytest.approx(v, rel=1e-10, abs=1e-15)
        assert got[left.index(2), right.index(2)] == 0.0
        assert (got > 0).sum() >= len(pairs) - 1
    with pytest.raises(hp.exceptions.InvalidArgumentError, match="one draw on fixed inputs; this one has 2 draws"):
        cross_pair_variances(fit_gp(space, space.encode(configs), y, n_draws=2, seed=0), [0], [1])


def test_pure_noise_gets_no_resolved_interaction() -> None:
    # an objective that is noise alone, 100 random trials of 10 parameters: the model fits
    # the noise, and one pair of parameters gets 13-27 % of its variance. Judged against a
    # null from the most important parameter's pairs with the shadows (1-3 %), that pair
    # was "resolved" in 7 of 8 such studies (these three among them); against every pair
    # with a shadow in it, in 1 of 8 (benchmarks/bench_pure_noise.py has the rates).
    # The rule is the null's, so it is tested on the model that keeps every parameter,
    # and the default (which takes out the parameters the likelihood barely pays for)
    # resolves no pair either.
    space = hp.SearchSpace([*(hp.Float(f"f{j}", 0, 1) for j in range(4)), hp.Float("lr", 1e-5, 1e-1, log=True),
                            hp.Int("layers", 1, 8), hp.Int("units", 16, 512, log=True),
                            hp.Categorical("opt", ["adam", "sgd", "rms"]),
                            *(hp.Float(f"g{j}", -3, 3) for j in range(2))])
    for seed in (1, 2, 4):
        configs = space.sample(100, seed=seed)
        y = np.random.default_rng(seed).normal(size=100)
        history = hp.TrialHistory(space, configs, y)
        r = hp.fanova(history, seed=0, max_order=2, surrogate=hp.GP(prune=False))
        pairs = r.ranking(order=2)
        assert len(pairs) == 45
        assert max(i.mean for i in pairs) > 0.05  # the model did fit the noise
        assert [str(i) for i in pairs if i.verdict == "resolved"] == [], seed
        pruned = hp.fanova(history, seed=0, max_order=2).ranking(order=2)
        assert [str(i) for i in pruned if i.verdict == "resolved"] == [], seed


def test_nothing_is_resolved_where_the_refits_do_not_rank_held_out_trials() -> None:
    # Pure noise on the space above: the model's fit of the noise beat the shadows'
    # null with a main effect or a pair in these four studies (f2 22 %, layers x opt
    # 34 %, layers x units 51 %, g0 29 %, "resolved"). Its refits, fit on halves of the
    # trials, rank the other halves no better than unrelated values would (median rank
    # correlations 0.00-0.08, against the 0.235 that 50 unrelated values exceed 5 % of
    # the time), so no effect is shown.
    # The same trials with an objective two parameters act on, and noise of the same
    # size: the refits predict, and both are resolved.
    space = hp.SearchSpace([*(hp.Float(f"f{j}", 0, 1) for j in range(4)), hp.Float("lr", 1e-5, 1e-1, log=True),
                            hp.Int("layers", 1, 8), hp.Int("units", 16, 512, log=True),
                            hp.Categorical("opt", ["adam", "sgd", "rms"]),
                            *(hp.Float(f"g{j}", -3, 3) for j in range(2))])
    for seed in (6, 7, 9, 13):
        configs = space.sample(100, seed=seed)
        noise = np.random.default_rng(seed).normal(size=100)
        r = hp.fanova(hp.TrialHistory(space, configs, noise), seed=0, max_order=2)
        assert r.held_out_bound == pytest.approx(1.6448536 / math.sqrt(50 - 1)), seed
        assert r.held_out_rank <= r.held_out_bound, seed
        assert r.signal_unshown, seed
        assert max(i.mean for i in r.ranking()) > 0.2  # the model did fit the noise
        assert [str(i) for i in r.ranking() if i.verdict == "resolved"] == [], seed
        assert r.to_dict()["signal_unshown"] is True
        y = [3 * c["f0"] + math.sin(6 * c["f1"]) for c in configs] + noise
        r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, max_order=2)
        assert not r.signal_unshown, seed
        ranks = [m.held_out_rank for m in r.model.refits]
        assert r.n_flat_refits == 0
        assert r.held_out_rank == pytest.approx(float(np.median(ranks))), seed
        assert r.held_out_rank > 0.5, seed
        assert {i.params[0] for i in r.ranking(order=1) if i.verdict == "resolved"} == {"f0", "f1"}, seed


@pytest.mark.parametrize("n", [2, 3, 4])
def test_too_few_trials_to_hold_any_out_resolve_nothing(n) -> None:
    # on 2 and 3 trials the held-out check was skipped, and effects came out "resolved"
    # with a leave-one-out R² of 0: with refits asked for and no half of three trials to
    # check them on, nothing is shown
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("k", 1, 5), hp.Float("z", 0, 1)])
    configs = space.sample(n, seed=1)
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 + 0.1 * c["k"] for c in configs])
    r = hp.fanova(history, seed=0)
    assert r.signal_unshown
    assert math.isnan(r.held_out_rank)
    assert r.to_dict()["held_out_rank"] is None
    assert [str(i) for i in r.ranking() if i.verdict == "resolved"] == []
    # a model that asked for no refits claims nothing about them either way
    assert not hp.fanova(history, seed=0, surrogate=hp.GP(refits=0)).signal_unshown
    # from five trials on, the refits are checked on their other halves
    five = space.sample(5, seed=1)
    five_history = hp.TrialHistory(space, five, [(c["x"] - 0.3) ** 2 + 0.1 * c["k"] for c in five])
    assert math.isfinite(hp.fanova(five_history, seed=0).held_out_rank)


def test_nested_conditional_block_is_exact() -> None:
    # opt -> layers (an int) -> w, and opt -> mom: one block of four columns whose
    # parents (opt, layers) are enumerated together
    space = hp.SearchSpace(
        [hp.Categorical("opt", ["a", "b", "c"]), hp.Int("layers", 1, 3),
         hp.Float("w", 0.0, 1.0), hp.Float("mom", 0.0, 1.0)],
        conditions=[hp.Condition("layers", "opt", values=["a", "b"]),
                    hp.Condition("w", "layers", gt=1),
                    hp.Condition("mom", "opt", values=["c"])],
    )
    configs = space.sample(90, seed=2)
    noise = np.random.default_rng(3).normal(0.0, 0.1, len(configs))
    y = np.array([{"a": 0.0, "b": 0.5, "c": 1.0}[c["opt"]] + 0.4 * c.get("layers", 0)
                  + math.sin(4 * c.get("w", 0.0)) + 2.0 * c.get("mom", 0.0) ** 2
                  for c in configs]) + noise
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    assert [(b.members, b.parents) for b in gp.blocks] == [((0, 1, 2, 3), (0, 1))]
    unit = _gauss_legendre(0.0, 1.0)
    nodes = [np.arange(3, dtype=float), np.arange(1, 4, dtype=float), unit[0], unit[0]]
    weights = [np.full(3, 1 / 3), np.full(3, 1 / 3), unit[1], unit[1]]
    _check_every_effect(gp, nodes, weights, space)


def test_conditions_are_inferred_from_define_by_run_trials() -> None:
    # an Optuna-style history: no conditions, only the trials' missing entries
    conditional = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q", "r"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5)],
        conditions=[hp.Condition("g", "m", values=["p", "r"])],
    )
    plain = hp.SearchSpace(list(conditional.params))
    configs = conditional.sample(70, seed=4)
    y = np.array([(math.sin(2 * c["g"]) if "g" in c else 0.5) + 0.3 * c["k"] for c in configs])
    X = conditional.encode(configs)
    a = fit_gp(conditional, X, y, n_draws=2, seed=0)
    b = fit_gp(plain, X, y, n_draws=2, seed=0)
    assert [blk.members for blk in b.blocks] == [(0, 1)]
    np.testing.assert_array_equal(b.blocks[0].active, a.blocks[0].active)
    subsets = [(0,), (1,), (2,), (0, 1), (1, 2)]
    np.testing.assert_allclose(decompose_gp(b, subsets)[0], decompose_gp(a, subsets)[0], rtol=1e-12)


def test_conditions_on_a_continuous_parent_fall_back_to_imputation_per_draw() -> None:
    # a condition on a float's value cannot be enumerated: each draw imputes the inactive
    # entries afresh, so each is its own function of the full product space; every
    # draw's numbers must be exact for that function
    space = hp.SearchSpace(
        [hp.Float("x", 0.0, 2.0), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5)],
        conditions=[hp.Condition("g", "x", gt=1.0)],
    )
    configs = space.sample(80, seed=5)
    noise = np.random.default_rng(1).normal(0.0, 0.1, len(configs))
    y = np.array([(math.sin(2 * c["g"]) if "g" in c else 0.5) + 0.3 * c["k"] + 0.2 * c["x"]
                  for c in configs]) + noise
    gp = fit_gp(space, space.encode(configs), y, n_draws=3, seed=0)
    assert not gp.shared_inputs
    assert gp.varying == (1,)
    assert not gp.blocks
    gl = _gauss_legendre(0.0, 2.0)
    nodes = [gl[0], gl[0], np.arange(1, 6, dtype=float)]
    weights = [gl[1], gl[1], np.full(5, 0.2)]
    _check_every_effect(gp, nodes, weights, space)


@pytest.mark.parametrize("ell", [0.01, 0.03, 0.05, 0.1, 0.3, 1.0, 10.0, 100.0])
def test_second_moment_by_quadrature_matches_the_closed_form(ell: float) -> None:
    from scipy.special import erf

    from hpinsight.surrogates.gp._kernel import Column, kernel_integrals, root

    u = np.random.default_rng(0).random(150)
    # E over T ~ U(0, 1) of exp(-(T-a)^2 / 2l^2) exp(-(T-b)^2 / 2l^2), written out here
    m, diff = 0.5 * (u[:, None] + u[None, :]), u[:, None] - u[None, :]
    W = np.exp(-(diff**2) / (4 * ell**2)) * 0.5 * ell * math.sqrt(math.pi) * (erf((1 - m) / ell) + erf(m / ell))
    z = ell * math.sqrt(math.pi / 2) * (erf((1 - u) / (math.sqrt(2) * ell)) + erf(u / (math.sqrt(2) * ell)))
    col = Column(False, 0.0, 1.0, 0, None, None)
    z_got, C = kernel_integrals(col, ell, u)
    np.testing.assert_allclose(z_got, z, rtol=1e-13)
    assert np.abs(C - (W - np.outer(z, z))).max() <= 5e-12 * W.max()
    A = root(col, ell, u)
    assert (A is None) == (ell < 0.04)  # short length scales would need too many nodes
    if A is not None:
        np.testing.assert_allclose(A.T @ A, C, rtol=0, atol=0)
        assert np.linalg.eigvalsh(C).min() >= -1e-14 * W.max()  # positive semi-definite


def test_root_of_discrete_and_categorical_columns_is_exact() -> None:
    from hpinsight.surrogates.gp._kernel import Column, root

    rng = np.random.default_rng(1)
    points, weights = np.linspace(0, 1, 7), rng.random(7)
    weights /= weights.sum()
    u = rng.choice(points, 40)
    K = np.exp(-0.5 * ((points[:, None] - u[None, :]) / 0.2) ** 2)
    z = weights @ K
    C = (K * weights[:, None]).T @ K - np.outer(z, z)
    A = root(Column(False, 0.0, 1.0, 0, points, weights), 0.2, u)
    assert A is not None
    np.testing.assert_allclose(A.T @ A, C, atol=1e-14)
    codes = rng.integers(0, 4, 40).astype(float)
    rho = math.exp(-0.5 / 0.7**2)
    Kc = np.where(np.arange(4)[:, None] == codes[None, :], 1.0, rho)
    zc = Kc.mean(axis=0)
    A = root(Column(True, 0.0, 1.0, 4, None, None), 0.7, codes)
    assert A is not None
    np.testing.assert_allclose(A.T @ A, Kc.T @ Kc / 4 - np.outer(zc, zc), atol=1e-14)


def test_likelihood_gradient_matches_finite_differences() -> None:
    # a block (m, g), an int and a categorical measured over its seen choices; every entry
    # of theta, the additive variance included
    from hpinsight.surrogates.gp._blocks import conditional_blocks
    from hpinsight.surrogates.gp._kernel import make_columns, scale_columns
    from hpinsight.surrogates.gp._likelihood import Likelihood, unit_members, variance_nll

    space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5),
         hp.Categorical("c", list("abcdef"))],
        conditions=[hp.Condition("g", "m", values=["p"])],
    )
    configs = [c for c in space.sample(60, seed=5) if c["c"] != "f"][:40]
    X = space.encode(configs)
    y = np.random.default_rng(0).normal(size=len(configs))
    blocks = conditional_blocks(space, X)
    cols = make_columns(space, X, keep={0})
    assert cols[3].n_choices == 5  # "f" never seen
    U = scale_columns(cols, X)
    units = unit_members(len(space), blocks)
    assert units == ((0, 1), (2,), (3,))
    # every unit its own additive variance; the categorical alone is outside the additive part
    theta = np.array([-0.3, 0.2, -1.0, 0.5, math.log(0.7), math.log(0.1),
                      math.log(0.4), math.log(0.9), math.log(0.3)])
    lik = Likelihood(cols, U, units)
    full, grad = lik(theta, y)
    h = 1e-6
    numeric = [(lik(theta + e, y)[0] - lik(theta - e, y)[0]) / (2 * h) for e in np.eye(9) * h]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)
    assert grad[8] == 0.0  # the categorical alone: outside the additive part
    assert min(abs(grad[6]), abs(grad[7])) > 1e-3
    # the value itself, against the Gaussian density of the kernel built apart from it
    from scipy.stats import multivariate_normal

    from hpinsight.surrogates.gp._likelihood import signal_kernel

    K = signal_kernel(cols, U, U, units, np.exp(theta[:4]), 0.7, np.exp(theta[6:])) + 0.1 * np.eye(len(y))
    prior = 0.5 * float((theta[:4] ** 2).sum()) / 1.5**2
    assert full == pytest.approx(-multivariate_normal(np.zeros(len(y)), K).logpdf(y) + prior, rel=1e-10)
    Kt, Ku = lik.kernels(np.exp(theta[:4]))
    value, grad3 = variance_nll(theta[4:], Kt, Ku, lik.mask / lik.n_additive, y, lik.below)
    assert value == pytest.approx(full - 0.5 * float((theta[:4] ** 2).sum()) / 1.5**2, rel=1e-12)
    np.testing.assert_allclose(grad3, grad[4:], rtol=1e-10)


def test_the_likelihood_refuses_units_that_do_not_hold_each_column_once() -> None:
    # the gradient reads each column's one unit; a column in two units, or in none, is refused
    from hpinsight.exceptions import InvalidArgumentError
    from hpinsight.surrogates.gp._kernel import Column
    from hpinsight.surrogates.gp._likelihood import Likelihood

    cols = [Column(False, 0.0, 1.0, 0, None, None)] * 3
    U = np.random.default_rng(0).random((6, 3))
    for units in (((0,), (0, 1), (2,)), ((0, 1),)):
        with pytest.raises(InvalidArgumentError, match="each of the 3 columns exactly once"):
            Likelihood(cols, U, units)
    assert Likelihood(cols, U, ((2, 0), (1,)))._owner.tolist() == [0, 1, 0]


def test_a_categorical_is_measured_over_the_choices_the_trials_contain() -> None:
    # 20 choices, the trials hold 10 of them: the effect is integrated over those 10,
    # exactly (brute force over them), and not shrunk by the 10 no trial says anything about
    space = hp.SearchSpace([hp.Categorical("c", [f"v{i}" for i in range(20)]), hp.Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(0)
    effect = np.sin(np.arange(20) * 1.7)
    codes = rng.integers(0, 10, 120)
    xs = rng.uniform(0, 1, 120)
    configs = [{"c": f"v{k}", "x": float(x)} for k, x in zip(codes, xs, strict=True)]
    y = effect[codes] + np.sin(3 * xs) + rng.normal(0, 0.05, 120)
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    assert gp.columns[0].n_choices == 10
    gl = _gauss_legendre(0.0, 1.0)
    _check_every_effect(gp, [np.arange(10, dtype=float), gl[0]], [np.full(10, 0.1), gl[1]], space)
    # the truth over the choices tried: Var(effect) and Var(sin 3x) under their measures
    v_c = float(effect[:10].var())
    v_x = float(gl[1] @ np.sin(3 * gl[0]) ** 2 - (gl[1] @ np.sin(3 * gl[0])) ** 2)
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    assert r.importance("c").mean == pytest.approx(v_c / (v_c + v_x), abs=0.03)


def test_posterior_sd_of_a_difference_matches_the_kernel_written_out() -> None:
    # the kernel of the module docstring, written out here: s_p prod_j k_j + s_a mean_j w_j k_j
    space = hp.SearchSpace([hp.Float("x", 0.0, 2.0), hp.Categorical("c", ["a", "b", "c"]),
                            hp.Float("z", 0.0, 1.0)])
    configs = space.sample(40, seed=3)
    y = np.array([math.sin(3 * c["x"]) * (1 + 2 * c["z"]) + (c["c"] == "b") for c in configs])
    y = y + np.random.default_rng(0).normal(0.0, 0.1, len(y))
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    # any weights of the two parts are a valid model; both at work here
    gp = dataclasses.replace(gp, signal_variance=max(gp.signal_variance, 0.3),
                             additive_variance=max(gp.additive_variance, 0.5),
                             additive_weights=np.array([1.6, 0.0, 0.4]))
    ell, w = gp.length_scales, gp.additive_units
    assert w.tolist() == [1.6, 0.0, 0.4]  # each unit its own additive variance

    def factors(P, Q):
        num = [np.exp(-0.5 * ((P[:, j][:, None] - Q[:, j][None, :]) / ell[j]) ** 2) for j in (0, 2)]
        cat = np.where(P[:, 1][:, None] == Q[:, 1][None, :], 1.0, math.exp(-0.5 / ell[1] ** 2))
        return [num[0], cat, num[1]]

    def k(P, Q):
        f = factors(P, Q)
        # the categorical alone is in the product part only
        return gp.signal_variance * (f[0] * f[1] * f[2]) + gp.additive_variance * (w[0] * f[0] + w[2] * f[2]) / 2

    scale = np.array([2.0, 1.0, 1.0])  # encoded -> [0, 1]
    A = space.encode(space.sample(5, seed=8))
    B = space.encode(space.sample(5, seed=9))
    Xt = gp.X[0]
    K = k(Xt, Xt) + gp.noise_variance * np.eye(len(Xt))
    a, b = A / scale, B / scale
    D = k(a, Xt) - k(b, Xt)
    prior = np.diag(k(a, a)) + np.diag(k(b, b)) - 2 * np.diag(k(a, b))
    var = prior - np.einsum("mi,im->m", D, np.linalg.solve(K, D.T))
    np.testing.assert_allclose(gp.difference_sd(A, B), gp.y_scale * np.sqrt(var), rtol=1e-6)
    assert gp.difference_sd(A, A) == pytest.approx(np.zeros(5), abs=1e-6)


def test_the_null_moves_less_with_the_analysis_seed_than_one_shuffle(monkeypatch) -> None:
    # one shuffle's largest shadow moves with the seed enough to flip verdicts; the median
    # over three shuffles (each fit from scratch) moves less, for main effects and pairs
    from hpinsight.surrogates.gp import _fit

    space = hp.SearchSpace([hp.Float(f"x{i}", 0, 1) for i in range(8)])
    configs = space.sample(120, seed=4)
    f = np.array([math.sin(5 * c["x0"]) + 2 * (c["x1"] - 0.5) ** 2 + c["x2"] * c["x0"] for c in configs])
    y = f + np.random.default_rng(0).normal(0, f.std() / 2, len(f))  # signal-to-noise 4
    X = space.encode(configs)

    def nulls(shuffles: int) -> np.ndarray:
        monkeypatch.setattr(_fit, "SHADOW_SHUFFLES", shuffles)
        return np.array([fit_gp(space, X, y, n_draws=1, seed=s, shadows=True).shadow_fractions
                         for s in range(8)])

    one, three = nulls(1), nulls(3)
    assert (one > 0).any(axis=0).all()
    np.testing.assert_array_less(three.std(axis=0), 0.75 * one.std(axis=0))


def test_predicting_with_one_column_fixed_equals_predicting_the_changed_rows() -> None:
    # predict_fixing swaps one column's term of the kernel instead of recomputing it; it
    # must give what predict_per_draw gives on the rows with that column set, for every
    # kind of column, the additive part, and each refit
    space = _mixed_space()
    configs = space.sample(70, seed=1)
    y = np.array([_mixed_objective(c) for c in configs])
    y += np.random.default_rng(2).normal(0.0, 0.1, len(configs))
    gp = fit_gp(space, space.encode(configs), y, n_draws=3, seed=0, refits=2)
    assert gp.additive_variance > 0
    assert len(gp.refits) == 2
    X = space.encode(space.sample(300, seed=3))
    fixes = [(0, 1.7), (1, 2.0), (2, 1.0), (3, math.log(0.01)), (4, math.log(4.0))]
    for model in (gp, *gp.refits):
        for (j, v), fast in zip(fixes, model.predict_fixing(X, fixes), strict=True):
            changed = X.copy()
            changed[:, j] = v
            slow = model.predict_per_draw(changed)
            assert fast.shape == slow.shape == (model.n_draws, 300)
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-8 * np.ptp(slow))
            assert not np.allclose(fast, model.predict_per_draw(X))  # the fix changed it
        # with free=True, first the prediction at X itself, from the same kernel terms
        unchanged, *fixed = model.predict_fixing(X, fixes, free=True)
        assert len(fixed) == len(fixes)
        np.testing.assert_allclose(unchanged, model.predict_per_draw(X), rtol=0,
                                   atol=1e-8 * np.ptp(unchanged))


def test_predicting_with_one_column_fixed_in_a_conditional_space() -> None:
    # 'k' stands alone and takes the swap; 'm' is the parent of the block (m, g) and
    # takes the changed rows; the queries leave 'g' NaN where 'm' makes it inactive; 'k'
    # is fixed twice, at two values
    space = hp.SearchSpace(
        [hp.Categorical("m", ["p", "q"]), hp.Float("g", 0.0, 2.0), hp.Int("k", 1, 5)],
        conditions=[hp.Condition("g", "m", values=["p"])],
    )
    configs = space.sample(60, seed=5)
    y = np.array([(math.sin(2 * c["g"]) if c["m"] == "p" else 0.5) + 0.3 * c["k"]
                  for c in configs]) + np.random.default_rng(1).normal(0.0, 0.1, 60)
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    assert [b.members for b in gp.blocks] == [(0, 1)]
    X = space.encode(space.sample(50, seed=2))
    assert np.isnan(X[:, 1]).any()
    fixes = [(2, 4.0), (0, 0.0), (2, 1.0)]
    unchanged, *fixed = gp.predict_fixing(X, fixes, free=True)
    slow = gp.predict_per_draw(X)
    np.testing.assert_allclose(unchanged, slow, rtol=0, atol=1e-8 * np.ptp(slow))
    for (j, v), fast in zip(fixes, fixed, strict=True):
        changed = X.copy()
        changed[:, j] = v
        slow = gp.predict_per_draw(changed)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-8 * np.ptp(slow))


def _sine_fit(n: int = 80):
    """Rescaled inputs, standardized values and the fitted hyperparameters of a GP on
    ``sin(3 x0)`` plus noise, four floats of which only ``x0`` acts."""
    from hpinsight.surrogates.gp._kernel import make_columns, scale_columns
    from hpinsight.surrogates.gp._likelihood import fit_hyperparameters, unit_members

    space = hp.SearchSpace([hp.Float(f"x{j}", 0.0, 2.0) for j in range(4)])
    X = space.encode(space.sample(n, seed=3))
    y = np.sin(3 * X[:, 0]) + np.random.default_rng(4).normal(0.0, 0.1, n)
    ys = (y - y.mean()) / y.std()
    cols = tuple(make_columns(space, X))
    U = scale_columns(cols, X)
    units = unit_members(len(cols), ())
    return cols, units, U, ys, fit_hyperparameters(cols, U, ys, units)


def test_the_second_starting_point_in_another_thread_gives_the_same_fit(monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hpinsight.surrogates.gp._likelihood import Likelihood, fit_hyperparameters_and_raw

    cols, units, U, ys, _ = _sine_fit()
    alone = fit_hyperparameters_and_raw(cols, U, ys, units)
    submitted = []
    twins = []
    real_twin = Likelihood.twin

    def twin(self: Likelihood) -> Likelihood:
        twins.append((self, real_twin(self)))
        return twins[-1][1]

    monkeypatch.setattr(Likelihood, "twin", twin)

    class Pool(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(args[0])
            return super().submit(fn, *args, **kwargs)

    with Pool(max_workers=1) as pool:
        threaded = fit_hyperparameters_and_raw(cols, U, ys, units, pool=pool)
    assert len(submitted) == 1  # the second start ran in the pool...
    (here, there), = twins
    assert submitted[0] is there  # ...on a twin with a buffer of its own
    assert there._K is not here._K
    assert not np.shares_memory(there._K, here._K)
    np.testing.assert_array_equal(threaded[0], alone[0])
    np.testing.assert_array_equal(threaded[1], alone[1])


@pytest.mark.parametrize("schedule", ["all here", "all in the second thread"])
def test_the_fits_shared_between_two_threads_do_not_depend_on_who_runs_them(monkeypatch, schedule) -> None:
    from concurrent.futures import Future

    import hpinsight.surrogates.gp._fit as fit_module

    space = hp.SearchSpace([hp.Float(f"x{j}", 0.0, 1.0) for j in range(4)])
    X = space.encode(space.sample(60, seed=2))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + np.random.default_rng(0).normal(0.0, 0.1, 60)
    shared = fit_module.fit_gp(space, X, y, n_draws=4, seed=7, shadows=True, refits=6)

    class Pool:
        """Runs nothing (this thread takes every fit) or runs each fit when given."""
        def __init__(self, max_workers: int) -> None:
            pass

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            future: Future = Future()
            if schedule == "all in the second thread":
                future.set_result(fn(*args, **kwargs))
            return future

    monkeypatch.setattr(fit_module, "ThreadPoolExecutor", Pool)
    alone = fit_module.fit_gp(space, X, y, n_draws=4, seed=7, shadows=True, refits=6)
    assert alone.shadow_fractions == shared.shadow_fractions
    assert len(alone.refits) == len(shared.refits) >= 4
    for a, b in zip(alone.refits, shared.refits, strict=True):
        np.testing.assert_array_equal(a.length_scales, b.length_scales)
    np.testing.assert_array_equal(alone.length_scales, shared.length_scales)
    np.testing.assert_array_equal(alone.beta, shared.beta)


def test_an_error_in_the_models_fit_leaves_the_queued_fits_unrun(monkeypatch) -> None:
    # an executor's shutdown runs every task still queued: on an error (or an interrupt)
    # in the model's own fit, the three shadows and six refits queued behind it are
    # cancelled instead, and the error reaches the caller at once
    from concurrent.futures import Future

    import hpinsight.surrogates.gp._fit as fit_module

    ran: list[object] = []

    class Pool:
        """Holds every task until it is shut down, then runs those not cancelled, as a
        real executor whose worker has not yet begun them would."""
        def __init__(self, max_workers: int) -> None:
            self.queued: list[tuple[Future, object]] = []

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            for future, fn in self.queued:
                if future.set_running_or_notify_cancel():
                    ran.append(fn)
                    future.set_result(None)

        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            future: Future = Future()
            self.queued.append((future, fn))
            return future

    def failing(*args: object, **kwargs: object) -> None:
        raise ValueError("the model's fit failed")

    monkeypatch.setattr(fit_module, "ThreadPoolExecutor", Pool)
    monkeypatch.setattr(fit_module, "fit_hyperparameters_and_raw", failing)
    space = hp.SearchSpace([hp.Float(f"x{j}", 0.0, 1.0) for j in range(3)])
    X = space.encode(space.sample(40, seed=1))
    with pytest.raises(ValueError, match="the model's fit failed"):
        fit_module.fit_gp(space, X, X[:, 0], n_draws=2, seed=0, shadows=True, refits=6)
    assert ran == []


def test_held_out_density_is_the_conditional_normal_of_each_row() -> None:
    # against the joint normal of all rows, conditioned by a dense solve; the rank
    # correlation of its mean (about the training rows' mean) by scipy's
    from scipy.stats import norm, spearmanr

    from hpinsight.surrogates.gp._fit import _held_out
    from hpinsight.surrogates.gp._likelihood import signal_kernel, split_theta

    cols, units, U, ys, theta = _sine_fit(40)
    train, test = np.arange(0, 40, 2), np.arange(1, 40, 2)
    ell, s, noise, a = split_theta(theta, len(cols))
    K = signal_kernel(cols, U, U, units, ell, s, a) + noise * np.eye(40)
    Ktt = K[np.ix_(train, train)]
    Kst = K[np.ix_(test, train)]
    mean = Kst @ np.linalg.solve(Ktt, ys[train])
    var = np.diag(K[np.ix_(test, test)] - Kst @ np.linalg.solve(Ktt, Kst.T))
    expected = norm.logpdf(ys[test], mean, np.sqrt(var)).mean()
    density, rank = _held_out(cols, units, U, ys, theta, train, test)
    assert density == pytest.approx(expected, rel=1e-9)
    centre = ys[train].mean()
    about = centre + Kst @ np.linalg.solve(Ktt, ys[train] - centre)
    assert rank == pytest.approx(spearmanr(about, ys[test]).statistic, rel=1e-9)
    assert rank > 0.5  # a sine the model has found orders rows it has not seen
    # values that have nothing to do with the inputs: no order, at or below 0 about
    # half the time (200 draws: the mean's standard error about 0.016)
    rng = np.random.default_rng(3)
    ranks = np.array([_held_out(cols, units, U, rng.normal(size=40), theta, train, test)[1] for _ in range(200)])
    assert abs(ranks.mean()) < 0.05
    assert 0.35 < (ranks <= 0).mean() < 0.65


def test_a_refit_that_lost_the_effect_is_left_out_of_the_spread() -> None:
    # five refits on halves; the third is made to fail as a single start can (the
    # parameter that acts given a length scale that makes it flat): it predicts the
    # other half far worse than the others and is dropped, the others are kept
    from hpinsight.surrogates.gp._fit import _plausible
    from hpinsight.surrogates.gp._likelihood import fit_hyperparameters

    cols, units, U, ys, theta = _sine_fit()
    rows = np.arange(ys.size)
    rng = np.random.default_rng(5)
    halves = [np.sort(rng.choice(rows, rows.size // 2, replace=False)) for _ in range(5)]
    thetas = [fit_hyperparameters(cols, U[h], ys[h], units) for h in halves]
    thetas[2] = thetas[2].copy()
    thetas[2][0] = math.log(100.0)  # x0 flat
    kept = _plausible(cols, units, U, ys, theta, rows, halves, thetas)
    assert [any(t is k for k, _ in kept) for t in thetas] == [True, True, False, True, True]
    # each kept refit carries its rank correlation on the half it was not fit on (the
    # lost one's is not among them: x0 flat, it orders the sine far worse)
    assert all(rank > 0.5 for _, rank in kept)
    # the two closest stay whatever their gaps: a spread needs two
    assert len(_plausible(cols, units, U, ys, theta, rows, halves[:2], thetas[1:3])) == 2


def _corner_history(seed: int) -> hp.TrialHistory:
    """A pure interaction ``16 (a - .5)(b - .5)`` (and ``1.5 c``) sampled as TPE samples it:
    all but 5 of 150 trials in the two good corners of ``(a, b)``, noise at about SNR 4."""
    rng = np.random.default_rng(seed)
    space = hp.SearchSpace([hp.Float(k, 0.0, 1.0) for k in ("a", "b", "c", "n1", "n2")])
    U = rng.uniform(size=(150, 5))
    corner, first = np.arange(150) >= 5, rng.uniform(size=150) < 0.5
    U[corner, 0] = np.where(first[corner], 0.8 + 0.2 * U[corner, 0], 0.2 * U[corner, 0])
    U[corner, 1] = np.where(first[corner], 0.2 * U[corner, 1], 0.8 + 0.2 * U[corner, 1])
    y = 16 * (U[:, 0] - 0.5) * (U[:, 1] - 0.5) + 1.5 * U[:, 2] + rng.normal(0.0, 0.7, 150)
    return hp.TrialHistory(space, [dict(zip(space.names, map(float, row), strict=True)) for row in U], list(y))


def test_corners_that_cannot_tell_main_effects_from_an_interaction_leave_it_uncertain(monkeypatch) -> None:
    # In the corners (1, 0) and (0, 1) a bowl in a and b fits the trials as well as their
    # interaction (which holds 0.90 of the variance): the model's own fit takes the bowl
    # and gives the pair nothing. Refits of the product part alone predict the other half
    # as well as the whole kernel's and give the pair a large share (0.46 at most here):
    # they are kept, the pair's spread says so, and it is "uncertain", not "nothing".
    from hpinsight.surrogates.gp import _fit

    history = _corner_history(1)
    r = hp.fanova(history, seed=0, max_order=2)
    pair = r.importance("a", "b")
    product = [m for m in r.model.refits if m.additive_variance < 1e-4]
    assert product
    shares = [decompose_gp(m, [(0, 1)]) for m in product]
    assert max(v[0, 0] / total[0] for v, total, _ in shares) > 0.3
    assert pair.mean < 0.05
    assert pair.verdict == "uncertain"
    monkeypatch.setattr(_fit, "PRODUCT_REFIT_SHARE", 0.0)
    whole = hp.fanova(history, seed=0, max_order=2).importance("a", "b")
    assert whole.mean == pytest.approx(pair.mean, rel=1e-9, abs=1e-12)
    assert pair.std > 1.3 * whole.std


def test_a_kernel_of_the_rows_with_themselves_has_the_bits_of_the_whole_computation() -> None:
    # between a set of rows and itself one-column kernels are computed below the diagonal
    # only, in blocks, and mirrored; the rows of that kernel are the bits of the same rows
    # against every row (computed whole), and the kernel is the sum of the units' kernels
    # built apart from it; with a unit of several columns, a categorical or an inactive
    # column among them, as well
    from hpinsight.surrogates.gp._kernel import Column, kernel_matrix, kernel_parts

    rng = np.random.default_rng(3)
    n = 600  # three blocks of rows, the last one short
    A = rng.random((n, 6))
    A[:, 2] = rng.integers(0, 3, n)  # a categorical
    A[rng.random(n) < 0.3, 3] = np.nan  # a conditional column
    num = Column(False, 0.0, 1.0, 0, None, None)
    cols = [num, num, Column(True, 0.0, 1.0, 3, None, None), num, num, num]
    ell = np.array([0.2, 0.7, 0.5, 0.3, 0.05, 2.0])
    for units, weights in ((((0,), (1,), (4,), (5,)), np.array([0.5, 1.0, 2.0, 1.5])),
                           (((0,), (2,), (1,), (3,), (4, 5)), np.array([0.5, 1.0, 2.0, 1.5, 0.25]))):
        prod, total = kernel_parts(cols, A, A, ell, units, weights, norm=3.0)
        # (450 rows of 600 and more: summed in two threads as the whole kernel is, in the
        # same order)
        for rows in (slice(0, 450), slice(150, 600)):
            p_rows, t_rows = kernel_parts(cols, A[rows], A, ell, units, weights, norm=3.0)
            assert np.array_equal(t_rows, total[rows])
            assert np.array_equal(p_rows, prod[rows])
        # (kernel_matrix sums squares through a matrix product: digits of the short length
        # scale cancel, a few times 1e-14)
        apart = sum(w * kernel_matrix([cols[i] for i in u], A[:, u], A[:, u], ell[list(u)])
                    for u, w in zip(units, weights, strict=True)) / 3.0
        np.testing.assert_allclose(total, apart, rtol=1e-12, atol=0)


def test_an_imputed_categorical_measured_over_its_seen_choices_decomposes_exactly() -> None:
    # c is active only where a > 0.5 (a continuous parent: its inactive entries are
    # imputed) and its active trials took p and q alone, so it is measured over those;
    # the imputation drew r and s too, codes outside the measure, and the total variance
    # came out 6.7 % off
    space = hp.SearchSpace([hp.Float("a", 0, 1), hp.Categorical("c", ["p", "q", "r", "s"]),
                            hp.Float("x", 0, 1)], conditions=[hp.Condition("c", "a", gt=0.5)])
    configs = [dict(q) for q in space.sample(60, seed=8)]
    for q in configs:
        if q.get("c") in ("r", "s"):
            q["c"] = "p"
    y = np.array([q["a"] + math.sin(3 * q["x"]) + (q.get("c") == "q") for q in configs])
    y = y + np.random.default_rng(0).normal(0.0, 0.05, y.size)
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    assert gp.columns[1].points is not None
    assert gp.columns[1].points.tolist() == [0.0, 1.0]
    assert set(np.unique(gp.X[0][:, 1])) <= {0.0, 1.0}
    a, wa = _gauss_legendre(0.0, 1.0)
    nodes = [a, np.array([0.0, 1.0]), a]
    weights = [wa, np.full(2, 0.5), wa]
    _check_every_effect(gp, nodes, weights, space)


@pytest.mark.parametrize(("param", "values", "points_kept"), [
    # the head of a log scale (each of its first values holds more of the measure than
    # the next) kept as points, the rest integrated over their cells
    (hp.Int("k", 1, 3000, log=True), np.arange(1, 3001.0), True),
    (hp.Int("k", 2, 4096, log=True), np.arange(2, 4097.0), True),
    # a linear scale of so many values: every cell narrow, integrated as continuous
    (hp.Int("k", 0, 5000), np.arange(0, 5001.0), False),
])
def test_an_integer_of_many_values_is_integrated_over_its_exact_measure(
        param: hp.Int, values: np.ndarray, points_kept: bool) -> None:
    # more than MAX_EXACT_POINTS values: integrated as continuous over [log 1, log 3000],
    # the total variance was 12.8 % low; over [log 0.5, log 3000.5] it was 2.7 % high, as
    # the value 1 holds 13 % of the measure. Against the sum over every value, with
    # Optuna's weights (each value's cell on the log scale):
    space = hp.SearchSpace([param, hp.Float("x", 0, 1)])
    configs = space.sample(60, seed=0)
    y = np.array([math.log(c["k"] + 1) + math.sin(4 * c["x"]) for c in configs])
    y = y + np.random.default_rng(0).normal(0.0, 0.05, y.size)
    gp = fit_gp(space, space.encode(configs), y, n_draws=2, seed=0)
    assert (gp.columns[0].points is not None) == points_kept
    if param.log:
        k = np.log(values)
        wk = np.diff(np.log(np.r_[values - 0.5, values[-1] + 0.5]))
    else:
        k, wk = values, np.ones(values.size)
    wk = wk / wk.sum()
    x, wx = _gauss_legendre(0.0, 1.0)
    weights = [wk, wx]
    grid = np.column_stack([m.ravel() for m in np.meshgrid(k, x, indexing="ij")])
    pred = gp.predict_per_draw(grid).reshape(gp.n_draws, k.size, x.size)
    subsets = [(0,), (1,), (0, 1)]
    variances, total, means = decompose_gp(gp, subsets)
    for b in range(gp.n_draws):
        f = pred[b]
        f0 = _expect(f, weights, (0, 1)).item()
        assert means[b] == pytest.approx(f0, rel=1e-6, abs=1e-9)
        assert total[b] == pytest.approx(_expect((f - f0) ** 2, weights, (0, 1)).item(), rel=1e-5)
        main_k = f @ wx - f0
        main_x = wk @ f - f0
        assert variances[b, 0] == pytest.approx(wk @ main_k**2, rel=1e-5)
        assert variances[b, 1] == pytest.approx(wx @ main_x**2, rel=1e-5)
        pair = f - f0 - main_k[:, None] - main_x[None, :]
        assert variances[b, 2] == pytest.approx(_expect(pair**2, weights, (0, 1)).item(),
                                                rel=1e-4, abs=1e-9 * total[b])
