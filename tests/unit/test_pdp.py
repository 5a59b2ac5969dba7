"""partial_dependence (Moosbauer et al. 2021): Monte Carlo PD against the exact marginal,
Eq. (4) against Eq. (5), bands that widen where the data are thin, grids, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern

import hpinsight as hp


@pytest.fixture
def forest_result():
    space = hp.SearchSpace([hp.Float("x", -2.0, 2.0), hp.Float("lr", 1e-4, 1.0, log=True),
                            hp.Categorical("kind", ["a", "b", "c"])])
    configs = space.sample(400, seed=0)
    y = [c["x"] ** 2 + 0.5 * math.log10(c["lr"]) + {"a": 0, "b": 1, "c": 3}[c["kind"]] * c["x"]
         for c in configs]
    return hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=24), seed=0)


def _gp(space, X_native, y):
    X = space.encode(X_native)
    return GaussianProcessRegressor(Matern(nu=1.5), alpha=1e-6, normalize_y=True,
                                    random_state=0).fit(X, y)


def test_monte_carlo_pd_of_a_forest_converges_to_its_exact_marginal(forest_result):
    exact = forest_result.marginal("x", grid_size=15)
    errors = []
    for n in (50, 500, 20_000):
        pd = hp.partial_dependence(forest_result, params="x", grid_size=15, n_samples=n, seed=1)
        np.testing.assert_allclose(pd.encoded_grid[0], exact.encoded_grid[0])
        errors.append(float(np.abs(pd.mean - exact.mean).max()))
        # within four Monte Carlo standard errors of the integral, at every grid point
        se = pd.ice_mean.std(axis=0) / math.sqrt(n)
        assert (np.abs(pd.mean - exact.mean) < 4 * se).all()
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 0.01 * float(np.ptp(exact.mean))
    # the same holds for a categorical parameter, over all its choices
    exact_kind = forest_result.marginal("kind")
    pd_kind = hp.partial_dependence(forest_result, params="kind", n_samples=20_000, seed=2)
    assert pd_kind.grid == (("a", "b", "c"),)
    se = pd_kind.ice_mean.std(axis=0) / math.sqrt(20_000)
    assert (np.abs(pd_kind.mean - exact_kind.mean) < 4 * se).all()


def test_forest_covariance_variance_is_the_spread_of_per_tree_pds(forest_result):
    pd = hp.partial_dependence(forest_result, params="x", grid_size=6, n_samples=300, seed=3,
                               variance="covariance")
    X = pd.samples.copy()
    for g, value in enumerate(pd.encoded_grid[0]):
        X[:, 0] = value
        per_tree_pd = [t.value[t.apply(X)].mean() for t in forest_result.model.trees]
        assert pd.variance[g] == pytest.approx(np.var(per_tree_pd), rel=1e-12)
    pointwise = hp.partial_dependence(forest_result, params="x", grid_size=6, n_samples=300,
                                      seed=3)
    np.testing.assert_array_equal(pointwise.mean, pd.mean)
    assert (pd.variance <= pointwise.variance + 1e-12).all()  # Eq. 4 <= Eq. 5 always


def test_gp_eq4_is_the_mean_posterior_covariance_and_never_exceeds_eq5():
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0)])
    configs = space.sample(40, seed=4)
    gp = _gp(space, configs, [math.sin(6 * c["a"]) + c["b"] for c in configs])
    eq4 = hp.partial_dependence(gp, "a", space=space, grid_size=5, n_samples=150, seed=0,
                                variance="covariance")
    eq5 = hp.partial_dependence(gp, "a", space=space, grid_size=5, n_samples=150, seed=0)
    assert eq4.model_kind == "gaussian process"
    X = eq4.samples.copy()
    X[:, 0] = eq4.encoded_grid[0][2]
    _, K = gp.predict(X, return_cov=True)
    assert eq4.variance[2] == pytest.approx(np.ones(150) @ K @ np.ones(150) / 150**2)
    np.testing.assert_allclose(eq5.variance[2], np.mean(gp.predict(X, return_std=True)[1] ** 2))
    assert (eq4.variance <= eq5.variance + 1e-12).all()
    np.testing.assert_allclose(eq4.mean, eq5.mean)


def test_bands_are_narrower_where_the_optimizer_sampled():
    """Configurations crowded into one corner (as a greedy optimizer leaves them) give a GP
    whose PD bands are wider away from it than uniform samples do (Sec. 4.1)."""
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", 0.0, 1.0)])
    uniform = space.sample(30, seed=5)
    rng = np.random.default_rng(5)
    biased = [{"a": float(a), "b": float(b)} for a, b in rng.uniform(0.0, 0.25, size=(30, 2))]

    def f(c):
        return (c["a"] - 0.2) ** 2 + 0.5 * c["b"]

    widths = {}
    for label, data in (("uniform", uniform), ("biased", biased)):
        gp = _gp(space, data, [f(c) for c in data])
        pd = hp.partial_dependence(gp, "a", space=space, n_samples=300, seed=0)
        lower, upper = pd.confidence_band(0.95)
        widths[label] = upper - lower
    assert widths["uniform"].mean() < widths["biased"].mean()
    assert widths["biased"][-1] > widths["biased"][0]  # least sure far from the samples


def test_any_model_with_predict_std_and_two_dimensional_grids():
    space = hp.SearchSpace([hp.Int("layers", 1, 4), hp.Float("lr", 1e-3, 1.0, log=True),
                            hp.Float("z", 0.0, 1.0)])

    class Linear:
        def predict(self, X, return_std=False):
            m = X[:, 0] + 2.0 * X[:, 1]
            return (m, np.full(len(X), 0.5)) if return_std else m

    pd = hp.partial_dependence(Linear(), ("layers", "lr"), space=space, grid_size=5, n_samples=50,
                               seed=0)
    assert pd.model_kind == "Linear"
    assert pd.grid[0] == (1, 2, 3, 4)
    np.testing.assert_allclose(np.log(pd.grid[1]), np.linspace(np.log(1e-3), 0.0, 5))
    assert pd.mean.shape == (4, 5)
    assert pd.ice_mean.shape == (50, 4, 5)
    expected = np.add.outer(np.arange(1, 5), 2.0 * np.log(np.asarray(pd.grid[1])))
    np.testing.assert_allclose(pd.mean, expected)
    np.testing.assert_allclose(pd.std, 0.5)
    # NLL of the true PD: the Gaussian density with std 0.5 at zero error
    assert pd.nll(expected) == pytest.approx(0.5 * np.log(2 * np.pi * 0.25))
    assert pd.nll(expected + 0.5) == pytest.approx(0.5 * np.log(2 * np.pi * 0.25) + 0.5)
    with pytest.raises(ValueError, match="grid's shape"):
        pd.nll(expected[0])
    lower, upper = pd.confidence_band(0.95)
    np.testing.assert_allclose(upper - lower, 2 * 1.959963984540054 * 0.5)
    d = pd.to_dict()
    assert d["params"] == ["layers", "lr"]
    assert d["grid"][0] == [1, 2, 3, 4]
    assert "ice" not in str(d).lower()
    with pytest.raises(ValueError, match="needs the posterior covariance"):
        hp.partial_dependence(Linear(), "z", space=space, variance="covariance")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"params": ()}, ValueError, "one or two distinct"),
        ({"params": ("x", "x")}, ValueError, "one or two distinct"),
        ({"params": "nope"}, KeyError, "nope"),
        ({"params": "x", "n_samples": 1}, ValueError, "n_samples"),
        ({"params": "x", "variance": "exact"}, ValueError, "variance"),
    ],
    ids=["none", "repeated", "unknown", "one-sample", "bad-variance"],
)
def test_bad_arguments_say_what_to_fix(forest_result, kwargs, error, match):
    with pytest.raises(error, match=match):
        hp.partial_dependence(forest_result, **kwargs)


def test_params_come_second_and_the_space_is_a_keyword():
    import inspect

    names = list(inspect.signature(hp.partial_dependence).parameters)
    assert names[:2] == ["model", "params"]
    with pytest.raises(TypeError, match="no longer takes 'surrogate'"):
        hp.partial_dependence(surrogate=None, params="x")
    assert inspect.signature(hp.partial_dependence).parameters["space"].kind.name == "KEYWORD_ONLY"


def test_a_model_needs_its_space_and_a_predict_method():
    with pytest.raises(TypeError, match="'space' parameter"):
        hp.partial_dependence(object(), params="x")
    space = hp.SearchSpace([hp.Float("x", 0, 1)])
    with pytest.raises(TypeError, match="predict"):
        hp.partial_dependence(object(), "x", space=space)
    with pytest.raises(ValueError, match="level"):
        hp.partial_dependence(
            type("M", (), {"predict": lambda self, X, return_std=False: (X[:, 0], X[:, 0])})(),
            "x", space=space, n_samples=5).confidence_band(1.5)


def test_the_pdp_names_the_surrogate_it_came_from():
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(40, seed=0)
    history = hp.TrialHistory(space, configs, [c["x"] ** 2 for c in configs])
    gp = hp.partial_dependence(hp.fanova(history, seed=0), "x", n_samples=20, seed=0)
    forest = hp.partial_dependence(hp.fanova(history, surrogate=hp.Forest(n_trees=4), seed=0), "x",
                                   n_samples=20, seed=0)
    assert (gp.model_kind, forest.model_kind) == ("gaussian process (draws)", "forest")


@pytest.mark.parametrize("conditional", [False, True], ids=["plain", "conditional"])
@pytest.mark.parametrize("surrogate", ["gp", "forest"])
def test_ice_curves_are_the_draws_predictions_with_the_parameter_set(make_mixed_space,
                                                                      conditional, surrogate):
    # one parameter's PD predicts every grid point at once (a GP shares the kernel terms
    # of the other parameters between them): each ICE curve must still be, point by
    # point, the draws' prediction at the samples with that parameter set
    space = make_mixed_space(conditional=conditional)
    configs = space.sample(80, seed=4)
    y = [c["x"] ** 2 + math.log10(c["lr"]) + c["n"] * (c["kind"] == "b") + c.get("child", 0.0)
         for c in configs]
    model = hp.GP(n_draws=6) if surrogate == "gp" else hp.Forest(n_trees=8)
    result = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=model, seed=0)
    for name in space.names:
        pd = hp.partial_dependence(result, params=name, grid_size=7, n_samples=60, seed=1)
        j, X = space.index(name), pd.samples.copy()
        for g, value in enumerate(pd.encoded_grid[0]):
            X[:, j] = value
            per_draw = result.model.predict_per_draw(X)
            # to rounding: the shared terms are summed in another order (the GP's
            # weights reach the hundreds on these noise-free trials)
            np.testing.assert_allclose(pd.ice_mean[:, g], per_draw.mean(axis=0),
                                       rtol=1e-8, atol=1e-8, err_msg=name)
            np.testing.assert_allclose(pd.ice_variance[:, g], per_draw.var(axis=0),
                                       rtol=1e-6, atol=1e-12, err_msg=name)
            assert pd.variance[g] == pytest.approx(per_draw.var(axis=0).mean(), rel=1e-8)


def test_a_log_scale_integer_is_drawn_on_a_grid_even_in_its_logarithm():
    # thinned evenly by index, 1-1024 gave 1, 55, 109, ...: the marginal and the PDP
    # skipped the decade of its optimum (8); a log float was already on a log grid
    space = hp.SearchSpace([hp.Int("n", 1, 1024, log=True), hp.Float("u", 0.0, 1.0)])
    configs = space.sample(60, seed=0)
    y = [(np.log2(c["n"]) - 3) ** 2 + 0.1 * c["u"] for c in configs]
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    for grid in (np.asarray(result.marginal("n").grid[0], float),
                 np.asarray(hp.partial_dependence(result, "n", seed=0).grid[0], float)):
        ratios = grid[1:] / grid[:-1]
        assert grid[0] == 1
        assert grid[-1] == 1024
        assert np.all(ratios > 1.0)
        assert np.max(ratios[3:]) / np.min(ratios[3:]) < 1.6  # even in the logarithm
        assert np.any((grid > 4) & (grid < 16))  # the optimum's decade is drawn


@pytest.mark.parametrize("surrogate", [None, "forest"], ids=["gp", "forest"])
def test_every_choice_of_a_categorical_is_on_the_grid_however_many(surrogate):
    # 30 choices at the default grid_size of 20: ten were left out, chosen by their index,
    # the best among them, and the PDP named another choice best
    names = [f"net_{i:02d}" for i in range(30)]
    space = hp.SearchSpace([hp.Categorical("arch", names), hp.Float("x", 0, 1)])
    configs = space.sample(300, seed=0)
    y = [(0.0 if c["arch"] == "net_01" else 1.0 + int(c["arch"][-2:]) % 5 / 10) + c["x"]
         for c in configs]
    kw = {} if surrogate is None else {"surrogate": hp.Forest()}
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, **kw)
    pd = hp.partial_dependence(r, params="arch", n_samples=200, seed=0)
    assert list(pd.grid[0]) == names
    assert pd.grid[0][int(np.argmin(pd.mean))] == "net_01"
    assert list(r.marginal("arch", "x", grid_size=5).grid[0]) == names


def test_the_default_gp_gives_eq4_as_the_spread_of_its_draws_pds():
    # the docs offer variance="covariance" for Gaussian processes, and the default GP was
    # refused it: over draws, Eq. 4 is the variance of the draws' mean curves
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(120, seed=0)
    y = [np.sin(6 * c["x"]) + c["z"] for c in configs]
    result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    pd = hp.partial_dependence(result, params="x", grid_size=5, n_samples=200, seed=3,
                               variance="covariance")
    X = pd.samples.copy()
    for g, value in enumerate(pd.encoded_grid[0]):
        X[:, 0] = value
        per_draw = result.model.predict_per_draw(X).mean(axis=1)
        assert pd.variance[g] == pytest.approx(np.var(per_draw), rel=1e-9)
    # a region's band is Eq. 5 only: split beside an Eq. 4 PDP, no region compared with it
    with pytest.raises(ValueError, match=r"splits on the mean of the ICE curves' variances"):
        hp.confidence_split(pd)


def test_a_conditional_parameters_pdp_is_drawn_where_it_is_active():
    # averaged over configurations where kind = b (x inactive, the objective 1), x's curve
    # was flattened towards 1 (0.59 at its optimum for a truth of 0.05), and
    # confidence_split made a region "kind in {'b'}" where x does not exist
    space = hp.SearchSpace([hp.Categorical("kind", ["a", "b"]), hp.Float("x", 0, 1),
                            hp.Float("z", 0, 1)], [hp.Condition("x", "kind", ["a"])])
    configs = space.sample(300, seed=0)
    y = [(4 * (c["x"] - 0.5) ** 2 if c["kind"] == "a" else 1.0) + 0.1 * c["z"]
         for c in configs]
    r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    pd = hp.partial_dependence(r, params="x", grid_size=5, n_samples=400, seed=0)
    kind = space.index("kind")
    assert pd.n_samples == 400
    assert (pd.samples[:, kind] == space["kind"].index_of("a")).all()
    np.testing.assert_allclose(pd.mean, 4 * (np.asarray(pd.grid[0]) - 0.5) ** 2 + 0.05, atol=0.03)
    tree = hp.confidence_split(pd, max_splits=3)
    assert not any("kind" in rule for leaf in tree.leaves() for rule in leaf.conditions)
    # with the parent among the PDP's parameters, activity changes along the grid: the
    # whole space is sampled
    both = hp.partial_dependence(r, params=("kind", "x"), grid_size=5, n_samples=200, seed=0)
    assert set(both.samples[:, kind]) == {0.0, 1.0}


def test_a_fanova_result_takes_no_other_space_than_its_own():
    # a wider range was extrapolated without a word ((0, 5, 10) for a model fitted on
    # [0, 1]); a space of fewer parameters failed with an IndexError
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(40, seed=0)
    result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] ** 2 for c in configs]), seed=0)
    for other in (hp.SearchSpace([hp.Float("x", 0, 10), hp.Float("z", 0, 1)]),
                  hp.SearchSpace([hp.Float("x", 0, 1)])):
        with pytest.raises(ValueError, match="not the one the FanovaResult's model was fitted"):
            hp.partial_dependence(result, "x", space=other, n_samples=20, seed=0)
    same = hp.partial_dependence(result, "x", space=space, n_samples=20, seed=0, grid_size=3)
    assert same.grid == hp.partial_dependence(result, "x", n_samples=20, seed=0, grid_size=3).grid


def test_params_that_are_not_names_get_a_clear_error():
    # partial_dependence(result, 0) failed with "'int' object is not iterable"
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(30, seed=0)
    result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0)
    for bad in (0, None, ("x", 1), ("x", "z", "x")):
        with pytest.raises(ValueError, match="must name one or two distinct parameters"):
            hp.partial_dependence(result, bad, n_samples=10, seed=0)
