"""Behaviour of the public fanova() on the paper's random forest: ground truth, measure,
conditionals, capping, bad input, determinism and invariants. (The Gaussian process, the
default surrogate, is tested in test_gp.py.)"""

from __future__ import annotations

import inspect
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestRegressor

import hpinsight as hp

from .conftest import fake_forest, fake_tree

_FOREST_OPTIONS = ("n_trees", "n_jobs", "min_samples_leaf", "max_features", "max_samples")


def fanova(configs, y, space, *, forest=None, **kwargs):
    """hp.fanova of TrialHistory(space, configs, y) on a random forest: ``hp.Forest`` with
    the forest options among ``kwargs``, or the fitted ``forest`` given."""
    options = {k: kwargs.pop(k) for k in _FOREST_OPTIONS if k in kwargs}
    model = hp.Forest(**options) if forest is None else hp.Forest.from_estimator(forest)
    return hp.fanova(hp.TrialHistory(space, configs, y), surrogate=model, **kwargs)


def _ishigami(X: np.ndarray) -> np.ndarray:
    return np.sin(X[:, 0]) + 7 * np.sin(X[:, 1]) ** 2 + 0.1 * X[:, 2] ** 4 * np.sin(X[:, 0])


def test_ishigami_recovers_sobol_indices():
    # Analytic indices for a=7, b=0.1: S1=0.314, S2=0.442, S3=0, S13=0.244, all other 0.
    # Tolerances: the decomposition is exact for the forest (test_tree_exact), so what is
    # left is the forest's approximation error. With 2,000 uniform samples a random forest
    # flattens the two peaks of 7 sin^2(x2); brute-force integration of the *averaged* forest
    # gives S2 ~ 0.36 too, so S2 gets the widest band and is checked to rank first.
    space = hp.SearchSpace([hp.Float(f"x{i}", -math.pi, math.pi) for i in (1, 2, 3)])
    configs = space.sample(2000, seed=0)
    y = _ishigami(space.encode(configs))
    r = fanova(configs, y, space, seed=0, max_order=2)
    assert r.importance("x1").mean == pytest.approx(0.314, abs=0.04)
    assert r.importance("x2").mean == pytest.approx(0.442, abs=0.12)
    assert r.importance("x3").mean == pytest.approx(0.0, abs=0.02)
    assert r.importance("x1", "x3").mean == pytest.approx(0.244, abs=0.04)
    assert r.importance("x1", "x2").mean < 0.03
    assert [i.params for i in r.ranking(order=1)] == [("x2",), ("x1",), ("x3",)]
    assert r.fit_r2 is not None
    assert r.fit_r2 > 0.9


def test_log_parameter_is_analysed_in_log_space():
    space = hp.SearchSpace([hp.Float("lr", 1e-5, 1.0, log=True), hp.Float("noise", 0.0, 1.0)])
    configs = space.sample(600, seed=1)
    y = [math.log(c["lr"]) for c in configs]
    r = fanova(configs, y, space, seed=0)
    assert r.importance("lr").mean > 0.99
    m = r.marginal("lr", grid_size=30)
    x = np.log(np.asarray(m.grid[0], dtype=float))
    np.testing.assert_allclose(x, np.linspace(math.log(1e-5), 0.0, 30), atol=1e-9)
    slope, intercept = np.polyfit(x, m.mean, 1)
    resid = m.mean - (slope * x + intercept)
    assert slope == pytest.approx(1.0, abs=0.05)
    assert np.abs(resid).max() < 0.4  # piecewise-constant steps around a straight line


def test_categorical_and_int_are_weighted_by_value_count():
    # y depends only on whether n == 1 (one of 10 values): mean of y is 0.1 * 10 = 1.
    space = hp.SearchSpace([hp.Int("n", 1, 10), hp.Categorical("c", list("abcd"))])
    configs = [{"n": n, "c": c} for n in range(1, 11) for c in "abcd"] * 3
    y = [10.0 if cfg["n"] == 1 else 0.0 for cfg in configs]
    r = fanova(configs, y, space, seed=0, n_trees=8)
    assert r.draw_means == pytest.approx(np.ones(8), abs=1e-9)
    assert r.total_variance == pytest.approx(0.1 * 0.9 * 100, rel=1e-9)
    assert r.importance("n").mean == pytest.approx(1.0, abs=1e-9)
    m = r.marginal("c")
    assert m.grid == (("a", "b", "c", "d"),)
    np.testing.assert_allclose(m.mean, 1.0, atol=1e-9)


def test_conditional_child_is_ranked_by_its_effect_and_no_trial_is_dropped():
    space = hp.SearchSpace(
        [
            hp.Categorical("kernel", ["rbf", "linear"]),
            hp.Float("gamma", 0.0, 1.0),
            hp.Float("noise1", 0.0, 1.0),
            hp.Float("noise2", 0.0, 1.0),
        ],
        conditions=[hp.Condition("gamma", "kernel", values=["rbf"])],
    )
    configs = space.sample(800, seed=3)
    y = [10 * c["gamma"] if c["kernel"] == "rbf" else 5.0 for c in configs]
    r = fanova(configs, y, space, seed=0, max_order=2)
    n_linear = sum(c["kernel"] == "linear" for c in configs)
    assert r.n_trials == 800
    assert r.n_inactive["gamma"] == n_linear > 300
    ranks = [i.params[0] for i in r.ranking(order=1)]
    assert ranks[0] == "gamma"
    assert r.importance("gamma").mean > 0.3
    assert r.importance("kernel", "gamma").mean > 0.2  # gamma only matters under rbf
    for noise in ("noise1", "noise2"):
        assert r.importance(noise).mean < 0.01


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_capping_explains_the_good_region(direction):
    # a decides between a bad and a good half; b matters only inside the good half.
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0)])
    configs = space.sample(1500, seed=4)
    sign = 1.0 if direction == "minimize" else -1.0
    y = [sign * (100.0 * (c["a"] > 0.5) + (c["a"] <= 0.5) * c["b"]) for c in configs]
    plain = fanova(configs, y, space, seed=0, direction=direction)
    capped = fanova(configs, y, space, seed=0, cap_quantile=0.4, direction=direction)
    # Capped at the 40% quantile (~0.8): the bad half becomes the constant cap, so `a` keeps
    # only the gap between the cap and the good half's mean, and `b` carries the rest.
    assert plain.importance("a").mean > 0.95
    assert plain.importance("b").mean < 0.01
    assert capped.importance("a").mean < 0.6
    assert capped.importance("b").mean > 0.2
    assert capped.cap_quantile == 0.4
    expected_cap = np.quantile(y, 0.4 if direction == "minimize" else 0.6)
    assert capped.cap_value == pytest.approx(expected_cap)
    by_value = fanova(configs, y, space, seed=0, cap_value=capped.cap_value, direction=direction)
    np.testing.assert_array_equal(by_value.variances, capped.variances)


def test_capping_does_not_mutate_user_data():
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0)])
    configs = space.sample(50, seed=0)
    y = np.arange(50, dtype=float)
    before_cfg = [dict(c) for c in configs]
    fanova(configs, y, space, cap_quantile=0.5, seed=0, n_trees=4)
    np.testing.assert_array_equal(y, np.arange(50, dtype=float))
    assert configs == before_cfg


# -- bad input -------------------------------------------------------------------------
_SPACE = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Categorical("c", ["a", "b"])])
_OK = [{"x": 0.1 * i, "c": "ab"[i % 2]} for i in range(10)]
_Y = [float(i) for i in range(10)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        pytest.param({"configs": [], "y": []}, hp.exceptions.InvalidDataError, "no usable trials", id="empty"),
        pytest.param({"y": _Y[:5]}, hp.exceptions.InvalidDataError, "10 configurations but 5", id="lengths"),
        pytest.param({"y": [math.nan] * 10}, hp.exceptions.InvalidDataError, "10 NaN/infinite", id="all-nan"),
        pytest.param({"y": [[1.0, 2.0]] * 10}, hp.exceptions.InvalidDataError, "one-dimensional", id="2d-y"),
        pytest.param({"y": ["a"] * 10}, hp.exceptions.InvalidDataError, "numbers", id="text-y"),
        pytest.param(
            {"configs": [*_OK[:9], {"x": 0.5, "c": "a", "z": 1}]},
            hp.exceptions.InvalidDataError, r"not in the search space: \['z'\]", id="unknown-name",
        ),
        pytest.param(
            {"configs": [*_OK[:9], {"x": 1.5, "c": "a"}]},
            hp.exceptions.InvalidDataError, r"configuration 9 is 1.5, outside \[0.0, 1.0\]", id="out-of-bounds",
        ),
        pytest.param(
            {"configs": [*_OK[:9], {"x": 0.5, "c": "zz"}]},
            hp.exceptions.InvalidDataError, "'zz', which is not one of its choices", id="unknown-choice",
        ),
        pytest.param(
            {"configs": [*_OK[:9], {"x": "high", "c": "a"}]},
            hp.exceptions.InvalidDataError, "must be a number", id="text-value",
        ),
        pytest.param({"configs": {"x": 0.1}}, hp.exceptions.InvalidDataError, "wrap it in a list", id="one-dict"),
        pytest.param({"configs": [1, 2]}, hp.exceptions.InvalidDataError, "must be a mapping", id="not-mappings"),
        pytest.param({"space": {"x": (0, 1)}}, TypeError, "must be an hpinsight SearchSpace", id="space-type"),
        pytest.param({"n_trees": 0}, ValueError, "'n_trees' parameter of Forest must be >= 1", id="n-trees"),
        pytest.param({"seed": 1.5}, TypeError, "'seed' parameter of fanova must be an int", id="seed"),
        pytest.param({"max_order": 3}, ValueError, "at most the number of parameters", id="order"),
        pytest.param({"direction": "min"}, ValueError, "must be one of", id="direction"),
        pytest.param({"cap_quantile": 0.0}, ValueError, r"must be in \(0.0, 1.0\]", id="cap-q"),
        pytest.param({"cap_quantile": 0.5, "cap_value": 1.0}, ValueError, "not both", id="two-caps"),
        pytest.param(
            {"cap_value": 1.0, "forest": RandomForestRegressor(2).fit(np.zeros((3, 2)), [0, 1, 2])},
            ValueError, "cannot cap", id="cap-with-forest",
        ),
        pytest.param({"forest": object()}, hp.exceptions.InvalidDataError, "call .fit first", id="unfitted"),
        pytest.param(
            {"forest": RandomForestRegressor(2).fit(np.zeros((3, 3)), [0, 1, 2])},
            hp.exceptions.InvalidDataError, "trained on 3 columns", id="forest-width",
        ),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, error, match):
    call = {"configs": _OK, "y": _Y, "space": _SPACE, "n_trees": 4, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        fanova(call.pop("configs"), call.pop("y"), call.pop("space"), **call)


def test_non_finite_objectives_are_refused_and_exclusions_are_counted():
    y = [*_Y[:7], math.nan, math.inf, -math.inf]
    with pytest.raises(ValueError, match=r"3 NaN/infinite value.*count them in .excluded."):
        hp.TrialHistory(_SPACE, _OK, y)
    history = hp.TrialHistory(_SPACE, _OK[:7], _Y[:7], excluded={"non-finite value": 3})
    r = hp.fanova(history, surrogate=hp.Forest(n_trees=4), seed=0)
    assert (r.n_trials, r.n_excluded) == (7, 3)
    assert r.to_dict()["n_excluded"] == 3


@pytest.mark.parametrize("given", [[{"x": 0.1, "c": "a"}], None, "history"],
                         ids=["configs", "none", "string"])
def test_fanova_takes_a_trial_history_and_says_how_to_make_one(given):
    with pytest.raises(TypeError, match=r"must be an hpinsight TrialHistory.*TrialHistory\(space, configs, y\)"):
        hp.fanova(given)
    with pytest.raises(TypeError):
        hp.fanova(_OK, _Y, _SPACE)  # the former three-argument form


@pytest.mark.parametrize("n", [1, 10], ids=["one-trial", "ten-trials"])
def test_constant_objective_gives_zero_importances_and_a_flag(n):
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning, match="constant"):
        r = fanova(_OK[:n], [3.0] * n, _SPACE, n_trees=4, seed=0, max_order=2)
    assert r.is_constant
    assert r.n_constant_draws == 4
    for imp in r.ranking():
        assert (imp.mean, imp.std) == (0.0, 0.0)
    assert not np.isnan(r.total_variance)
    json.dumps(r.to_dict(), allow_nan=False)
    assert r.marginal("x").mean == pytest.approx(np.full(100, 3.0))


def test_importance_lookup_errors():
    r = fanova(_OK, _Y, _SPACE, n_trees=4, seed=0)
    with pytest.raises(KeyError, match="valid names"):
        r.importance("nope")
    with pytest.raises(KeyError, match="max_order=2"):
        r.importance("x", "c")
    with pytest.raises(TypeError, match="one or two"):
        r.marginal("x", "c", "x")


# -- result object ----------------------------------------------------------------------
def test_result_exports_are_json_safe_and_consistent():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Int("n", 1, 5), hp.Categorical("c", [True, None, "s"])])
    configs = space.sample(200, seed=0)
    y = [c["x"] * c["n"] + (c["c"] is None) for c in configs]
    r = fanova(configs, y, space, seed=0, max_order=2)
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    effects = {tuple(e["params"]): e for e in d["effects"]}
    assert set(effects) == set(r.subsets)
    assert effects[("x",)]["mean"] == r.importance("x").mean
    marginal = json.loads(json.dumps(r.marginal("c").to_dict(), allow_nan=False))
    assert marginal["grid"] == [[True, None, "s"]]
    frame = r.to_frame()
    assert list(frame.columns) == ["params", "order", "mean", "std", "low", "high", "shadow", "regrown",
                                   "verdict"]
    x = frame[frame["params"] == "x"].iloc[0]
    assert x["low"] == effects[("x",)]["low"]
    assert x["high"] == effects[("x",)]["high"]
    assert x["low"] < x["mean"] < x["high"]
    assert frame["mean"].is_monotonic_decreasing
    assert len(frame) == 6
    assert frame["regrown"].isna().all()  # a forest has no removal check (test_gp has the GP's)
    long = r.marginal("x", "n", grid_size=6).to_frame()
    assert long.shape == (6 * 5, 4)  # all 5 integer values, 6 points of x
    assert "FanovaResult(n_trials=200" in repr(r)
    with pytest.raises(ValueError, match="read-only"):
        r.variances[0, 0] = 1.0


def test_fractions_are_computed_once_and_ranking_reads_them():
    # ranking() used to recompute every tree's fractions per effect: quadratic in effects
    r = fanova(_OK, _Y, _SPACE, n_trees=4, seed=0, max_order=2)
    assert r.fractions is r.fractions
    with pytest.raises(ValueError, match="read-only"):
        r.fractions[0, 0] = 1.0
    assert r.ranking() == tuple(sorted((r.importance(*s) for s in r.subsets),
                                       key=lambda i: (-i.mean, i.params)))


# -- invariants -------------------------------------------------------------------------
def test_same_seed_gives_bit_identical_results_whatever_n_jobs(make_mixed_space):
    space = make_mixed_space(conditional=True)
    configs = space.sample(300, seed=5)
    y = [c["x"] + c.get("child", 0.0) for c in configs]
    a = fanova(configs, y, space, seed=7, max_order=2, n_jobs=1)
    b = fanova(configs, y, space, seed=7, max_order=2, n_jobs=-1)
    c = fanova(configs, y, space, seed=8, max_order=2)
    np.testing.assert_array_equal(a.variances, b.variances)
    np.testing.assert_array_equal(a.draw_variances, b.draw_variances)
    assert not np.array_equal(a.variances, c.variances)


def _permuted_tree(est, perm_inverse):
    t = est.tree_
    feature = np.where(t.feature >= 0, perm_inverse[np.maximum(t.feature, 0)], t.feature)
    return fake_tree(t.children_left, t.children_right, feature, t.threshold, t.value, len(perm_inverse))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(min_value=2, max_value=60),
    seed=st.integers(min_value=0, max_value=10_000),
    perm=st.permutations([0, 1, 2, 3]),
    leaves=st.integers(min_value=2, max_value=20),
)
def test_invariants_hold_for_random_forests(n, seed, perm, leaves):
    space = hp.SearchSpace(
        [hp.Float("x", -1, 1), hp.Float("lr", 1e-3, 1, log=True), hp.Int("k", 1, 5), hp.Categorical("c", list("pqr"))]
    )
    rng = np.random.default_rng(seed)
    configs = space.sample(n, seed=seed)
    X = space.encode(configs)
    y = rng.standard_normal(n) + X[:, 0] * X[:, 2]
    forest = RandomForestRegressor(3, max_leaf_nodes=leaves, random_state=seed).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hp.exceptions.ConstantObjectiveWarning)
        r = fanova(configs, y, space, forest=forest, max_order=2)
        f = r.fractions[r.valid_draws]
        assert np.all(f >= -1e-12)
        assert np.all(f <= 1 + 1e-12)
        assert np.all(f.sum(axis=1) <= 1 + 1e-9)
        # permuting the parameter order permutes the results exactly
        pspace = hp.SearchSpace([space.params[p] for p in perm])
        inverse = np.argsort(perm)
        pforest = fake_forest([_permuted_tree(e, inverse) for e in forest.estimators_], 4)
        pconfigs = [{k: cfg[k] for k in pspace.names} for cfg in configs]
        pr = fanova(pconfigs, y, pspace, forest=pforest, max_order=2)
    for s in r.subsets:
        assert pr.importance(*s).mean == pytest.approx(r.importance(*s).mean, abs=1e-12)
    np.testing.assert_allclose(pr.draw_variances, r.draw_variances, rtol=1e-12, atol=1e-15)


def test_additive_objective_has_negligible_pairwise_interactions():
    space = hp.SearchSpace([hp.Float(f"x{i}", 0, 1) for i in range(4)])
    configs = space.sample(1500, seed=2)
    X = space.encode(configs)
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * X[:, 2]
    r = fanova(configs, y, space, seed=0, max_order=2)
    assert sum(i.mean for i in r.ranking(order=2)) < 0.05
    assert sum(i.mean for i in r.ranking(order=1)) > 0.9


def test_import_loads_no_optional_dependency():
    import subprocess
    import sys

    code = (
        "import sys, hpinsight, hpinsight.results, hpinsight.integrations, hpinsight.cli;"
        "import hpinsight.cli._watch;"
        "bad = [m for m in ('optuna', 'smac', 'ConfigSpace', 'matplotlib', 'pandas', 'optuna_dashboard', 'plotly') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dataframe_input_equals_list_of_dicts():
    pd = pytest.importorskip("pandas")
    space = hp.SearchSpace(
        [hp.Float("x", 0, 1), hp.Categorical("k", ["a", "b"]), hp.Float("c", 0, 1)],
        conditions=[hp.Condition("c", "k", values=["a"])],
    )
    configs = space.sample(120, seed=0)
    frame = pd.DataFrame(configs)  # inactive entries become NaN
    assert frame["c"].isna().sum() == sum("c" not in c for c in configs) > 0
    y = frame["x"] + frame["c"].fillna(0.0)
    a = fanova(frame, y, space, seed=0, n_trees=8)
    b = fanova(configs, y.tolist(), space, seed=0, n_trees=8)
    np.testing.assert_array_equal(a.variances, b.variances)
    assert a.n_inactive["c"] == frame["c"].isna().sum()
    from_frame, from_rows = hp.TrialHistory(space, frame, y), hp.TrialHistory(space, configs, y)
    frame.loc[0, "x"] = 0.999  # the history holds its own copy
    X = from_frame.encoded()
    np.testing.assert_array_equal(X, from_rows.encoded())
    assert from_frame.encoded() is X
    assert not X.flags.writeable


def test_the_gaussian_process_is_the_default_and_a_given_forest_is_decomposed_as_it_is():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(40, seed=0)
    y = [c["x"] for c in configs]
    history = hp.TrialHistory(space, configs, y)
    default = hp.fanova(history, seed=0)
    assert default.surrogate == hp.GP()
    assert default.surrogate.kind == "gp"
    forest = RandomForestRegressor(4, random_state=0).fit(space.encode(configs), y)
    given = hp.fanova(history, surrogate=hp.Forest.from_estimator(forest))
    assert given.surrogate.kind == "forest"
    assert given.n_draws == 4
    np.testing.assert_array_equal(given.model.predict_per_draw(space.encode(configs)),
                                  np.stack([t.predict(space.encode(configs))
                                            for t in forest.estimators_]))
    with pytest.raises(ValueError, match="cannot cap the objective of an already fitted"):
        hp.fanova(history, surrogate=hp.Forest.from_estimator(forest), cap_quantile=0.5)


@pytest.mark.parametrize(("old", "new"), [
    ({"n_trees": 8}, r"surrogate=hp\.Forest\(n_trees=\.\.\.\)"),
    ({"forest": None}, r"surrogate=hp\.Forest\.from_estimator\(model\)"),
    ({"n_draws": 4}, r"surrogate=hp\.GP\(n_draws=\.\.\.\)"),
    ({"significance": False}, r"surrogate=hp\.GP\(shadows=\.\.\.\)"),
    ({"n_jobs": 2}, r"surrogate=hp\.Forest\(n_jobs=\.\.\.\)"),
    ({"surrogate": "forest"}, r"surrogate=hp\.Forest\(\) instead of 'forest'"),
    ({"surrogate": "gp"}, r"surrogate=hp\.GP\(\) instead of 'gp'"),
])
def test_the_options_the_model_object_now_holds_fail_with_the_object_to_pass(old, new):
    history = hp.TrialHistory(_SPACE, _OK, _Y)
    with pytest.raises(TypeError, match=new):
        hp.fanova(history, **old)


def test_a_scikit_learn_forest_must_be_wrapped_and_fanova_takes_at_most_eight_keywords():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(20, seed=0)
    y = [c["x"] for c in configs]
    forest = RandomForestRegressor(2, random_state=0).fit(space.encode(configs), y)
    with pytest.raises(TypeError, match=r"hp\.Forest\.from_estimator\(model\)"):
        hp.fanova(hp.TrialHistory(space, configs, y), surrogate=forest)
    keywords = [p for p in inspect.signature(hp.fanova).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert [p.name for p in keywords] == ["surrogate", "max_order", "cap_quantile",
                                          "cap_value", "direction", "seed"]


def test_importance_and_ranking_give_the_same_summary_before_and_after_ranking():
    # results are immutable: ranking() summarizes every effect once, and importance()
    # answers from that summary after it, the same numbers as before it
    import dataclasses

    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("w", 0, 1)])
    configs = space.sample(120, seed=0)
    result = fanova(configs, [c["x"] + 0.5 * c["x"] * c["z"] for c in configs], space,
                    n_trees=8, seed=0, max_order=2)
    fresh = dataclasses.replace(result)
    before = {key: fresh.importance(*key) for key in (("x",), ("z", "x"), ("w",))}
    ranked = {i.params: i for i in result.ranking()}
    for key, imp in before.items():
        after = result.importance(*key)
        assert after is ranked[after.params]  # from the summary, not summarized again
        assert after == imp


@pytest.mark.parametrize("surrogate", [None, hp.Forest(n_trees=8)], ids=["gp", "forest"])
def test_trials_that_never_vary_their_configuration_are_called_so(surrogate):
    # the Gaussian process gave each parameter 0.4997 ("uncertain") without a word, and
    # the forest said "the objective looks constant" of values that vary
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    y = np.random.default_rng(0).random(20)
    history = hp.TrialHistory(space, [{"x": 0.5, "z": 0.5}] * 20, y)
    options = {} if surrogate is None else {"surrogate": surrogate}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hp.fanova(history, seed=0, **options)
    messages = [str(w.message) for w in caught if issubclass(w.category, hp.exceptions.HPInsightWarning)]
    assert len(messages) == 1
    assert "same configuration" in messages[0]
    assert "looks constant" not in messages[0]
    assert caught[0].filename == __file__  # the user's line, not the package's


def test_an_effect_shown_below_the_floor_is_negligible_not_indistinguishable():
    # y moves the objective by 0.5 of a range of 25: 0.036 % of the variance, its interval
    # ten thousand times its shadow's share, yet it was called "indistinguishable from
    # nothing" while the decision beside it said fixing it costs four margins
    space = hp.SearchSpace([hp.Float("x", -5, 5), hp.Float("y", 0, 1)])
    configs = space.sample(80, seed=0)
    noise = np.random.default_rng(0).standard_normal(80)
    y = [c["x"] ** 2 + 0.5 * c["y"] + 0.01 * e for c, e in zip(configs, noise, strict=True)]
    effect = hp.fanova(hp.TrialHistory(space, configs, y), seed=0).importance("y")
    from hpinsight._fanova_result import NEGLIGIBLE_SHARE, verdict

    assert effect.verdict == "negligible"
    assert effect.mean < NEGLIGIBLE_SHARE
    assert effect.null is not None
    assert effect.interval[0] > effect.null
    # a share below the floor whose interval reaches the null stays "nothing"

    assert verdict(1e-4, 1e-4, 5e-5) == "indistinguishable from nothing"
    assert verdict(1e-4, 1e-6, 5e-5) == "negligible"


def test_a_forest_that_predicts_no_better_than_the_mean_resolves_nothing():
    # pure noise: the forest's spread over trees does not hold the noise of its fit, and
    # 9 of 50 main effects were "resolved", one of them said to matter (12.4 %)
    space = hp.SearchSpace([hp.Float(f"p{i}", 0, 1) for i in range(5)])
    configs = space.sample(200, seed=0)
    for seed in range(3):
        y = np.random.default_rng(seed).normal(size=200)
        r = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(), seed=0)
        assert r.fit_r2 is not None
        assert r.fit_r2 <= 0
        assert r.signal_unshown
        assert not [i for i in r.ranking() if i.verdict == "resolved"]
    # with a signal its out-of-bag R² is positive and the effect stays resolved
    y = np.array([c["p0"] for c in configs]) + np.random.default_rng(0).normal(0, 0.05, 200)
    r = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(), seed=0)
    assert r.fit_r2 > 0.5
    assert not r.signal_unshown
    assert r.ranking()[0].params == ("p0",)
    assert r.ranking()[0].verdict == "resolved"


def test_a_maximized_history_keeps_its_best_trials_in_the_gaussian_process() -> None:
    # of more than 2,000 trials the best tenth is always kept: it was the lowest tenth,
    # so a maximized study kept its worst trials and drew its best at random (of a narrow
    # dip, 41 of 119 trials used against 119 of 119 for the same study minimized)
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(2200, seed=0)
    y = np.array([(c["x"] - 0.3) ** 2 + 0.1 * c["z"] for c in configs])
    low = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    high = hp.fanova(hp.TrialHistory(space, configs, -y, direction="maximize"), seed=0)
    used_low, used_high = ~np.isnan(low.model.residuals), ~np.isnan(high.model.residuals)
    assert used_low.sum() == 2000
    assert np.all(used_low[np.argsort(y)[:200]])
    np.testing.assert_array_equal(used_high, used_low)


def test_the_share_above_max_order_says_what_it_is_and_is_judged_by_its_interval():
    # it printed as "Importance(: 0.0000 ± 0.0000)" and ": 0.0 % ± 0.0 %, resolved"
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1), hp.Float("w", 0, 1)])
    configs = space.sample(80, seed=0)
    product = hp.fanova(hp.TrialHistory(space, configs, [c["x"] * c["z"] * c["w"]
                                                         for c in configs]), seed=0, max_order=1)
    rest = product.unexplained_fraction
    # x z w on the unit cube: each main effect (1/192) of the variance 1/27 - 1/64
    assert rest.mean == pytest.approx(1 - 3 * (1 / 192) / (1 / 27 - 1 / 64), abs=0.01)
    assert str(rest).startswith("interactions above max_order: 27.")
    assert rest.verdict == "resolved"
    additive = hp.fanova(hp.TrialHistory(space, configs, [c["x"] + c["z"] for c in configs]),
                         seed=0, max_order=3)
    none = additive.unexplained_fraction
    assert none.verdict == "indistinguishable from nothing"
    assert repr(none).startswith("Importance(interactions above max_order: 0.0000")
    assert additive.to_dict()["unexplained_fraction"]["verdict"] == none.verdict
