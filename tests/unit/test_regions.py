"""confidence_split (Moosbauer et al. 2021, Algorithm 1): the known best split, Eq. (6)
against brute force, categorical subsets, regions that hold exactly their samples, and
regions handed back as search spaces."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hpinsight as hp


class Uncertain:
    """Mean x + z; predictive std 0.1 where z < 0.3 (well explored), else 1 + w."""

    def __init__(self, space: hp.SearchSpace) -> None:
        self.iz, self.iw, self.ix = space.index("z"), space.index("w"), space.index("x")

    def predict(self, X, return_std=False):
        m = X[:, self.ix] + X[:, self.iz]
        s = np.where(X[:, self.iz] < 0.3, 0.1, 1.0 + X[:, self.iw])
        return (m, s) if return_std else m


@pytest.fixture
def numeric():
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Float("z", 0.0, 1.0),
                            hp.Float("w", 0.0, 1.0)])
    pd = hp.partial_dependence(Uncertain(space), "x", space=space, grid_size=8, n_samples=400, seed=0)
    return space, pd


def _eq6(V):
    return float(((V - V.mean(axis=0)) ** 2).sum())


def test_the_first_split_separates_the_well_explored_region(numeric):
    space, pd = numeric
    tree = hp.confidence_split(pd, max_splits=1)
    name, threshold = tree.root.split
    assert name == "z"
    z = pd.samples[:, space.index("z")]
    assert z[z < 0.3].max() <= threshold <= z[z >= 0.3].min()  # exactly between the groups
    left, right = tree.root.children
    np.testing.assert_allclose(left.std, 0.1)
    assert right.mean_confidence > 1.0
    assert tree.delta_improvement(left) > 0.8
    assert left.conditions == (f"z <= {threshold:.4g}",)
    # Eq. (6) by brute force over every threshold gives the same choice
    V = pd.ice_variance
    order = np.argsort(z)
    costs = [_eq6(V[order[:k]]) + _eq6(V[order[k:]]) for k in range(20, len(z) - 20)]
    k_best = 20 + int(np.argmin(costs))
    assert set(order[:k_best]) == set(left.indices.tolist())


def test_regions_partition_the_sample_and_hold_exactly_their_samples(numeric):
    space, pd = numeric
    tree = hp.confidence_split(pd, max_splits=3)
    leaves = tree.leaves()
    assert len(leaves) == 4  # three splits breadth first: a full depth-2 tree
    assert all(leaf.depth == 2 for leaf in leaves)
    everything = np.concatenate([leaf.indices for leaf in leaves])
    assert sorted(everything.tolist()) == list(range(pd.n_samples))
    configs = space.decode(pd.samples)
    for leaf in leaves:
        for i in range(pd.n_samples):
            inside = tree.leaf_for(configs[i]) is leaf
            assert inside == (i in set(leaf.indices.tolist()))
        for name, (low, high) in leaf.bounds.items():
            values = pd.samples[leaf.indices, space.index(name)]
            assert (values >= low).all()
            assert (values <= high).all()
    # the global PD is the size-weighted average of the regional ones
    weighted = sum(leaf.n_samples * leaf.mean for leaf in leaves) / pd.n_samples
    np.testing.assert_allclose(weighted, pd.mean)
    assert "x" not in {leaf.split[0] for leaf in [tree.root] if leaf.split}


def test_a_region_becomes_a_search_space_the_optimizer_can_use(numeric):
    space, pd = numeric
    tree = hp.confidence_split(pd, max_splits=3)
    best = min(tree.leaves(), key=lambda leaf: leaf.mean_confidence)
    narrowed = tree.to_search_space(best)
    assert narrowed.names == space.names
    for name, (low, high) in best.bounds.items():
        assert narrowed[name].low == pytest.approx(max(low, space[name].low))
        assert narrowed[name].high == pytest.approx(min(high, space[name].high))
    for config in narrowed.sample(50, seed=1):
        assert tree.leaf_for(config) is best
    incumbent = {"x": 0.9, "z": 0.05, "w": 0.5}
    assert tree.leaf_for(incumbent).bounds["z"][1] < 0.3
    assert tree.confidence_at(tree.leaf_for(incumbent), 0.9) == pytest.approx(0.1)


@pytest.mark.parametrize("exact_levels", [10, 2], ids=["all-subsets", "ordering-shortcut"])
def test_categorical_levels_are_grouped_by_their_uncertainty(exact_levels):
    levels = [f"l{i}" for i in range(10)]
    noisy = {"l1", "l4", "l5", "l8"}
    space = hp.SearchSpace([hp.Float("x", 0.0, 1.0), hp.Categorical("kind", levels)])

    class ByLevel:
        def predict(self, X, return_std=False):
            s = np.where(np.isin(X[:, 1], [levels.index(v) for v in noisy]), 2.0, 0.2)
            return (X[:, 0], s) if return_std else X[:, 0]

    pd = hp.partial_dependence(ByLevel(), "x", space=space, grid_size=4, n_samples=500, seed=0)
    tree = hp.confidence_split(pd, max_splits=1, exact_levels=exact_levels,
                               min_node_size=20)
    name, left_levels = tree.root.split
    assert name == "kind"
    assert set(left_levels) in (noisy, set(levels) - noisy)
    left, right = tree.root.children
    assert sorted([left.mean_confidence, right.mean_confidence]) == pytest.approx([0.2, 2.0])
    quiet = left if left.mean_confidence < 1 else right
    assert set(tree.to_search_space(quiet)["kind"].choices) == set(levels) - noisy


def test_stopping_rules_and_bad_arguments(numeric):
    _, pd = numeric
    assert hp.confidence_split(pd, max_splits=0).root.is_leaf
    assert hp.confidence_split(pd, max_splits=5, min_node_size=250).root.is_leaf  # n=400
    assert hp.confidence_split(pd, max_splits=3, min_improvement=0.99).root.is_leaf
    with pytest.raises(ValueError, match="max_splits"):
        hp.confidence_split(pd, max_splits=-1)
    with pytest.raises(ValueError, match="min_improvement"):
        hp.confidence_split(pd, min_improvement=2.0)
    tree = hp.confidence_split(pd, max_splits=1)
    d = tree.to_dict()
    assert d["params"] == ["x"]
    assert len(d["root"]["children"]) == 2
    with pytest.raises(KeyError, match="needs a value for 'z'"):
        tree.leaf_for({"x": 0.5})


def test_the_confidence_at_a_value_of_a_conditional_parameter_is_read_at_that_value():
    # {"momentum": v} alone encodes momentum as inactive (its parent missing): every value
    # read the first grid point's band (0.01 for 0.0, 0.5 and 1.0 alike), with a warning
    import warnings

    space = hp.SearchSpace([hp.Categorical("optimizer", ["adam", "sgd"]), hp.Float("lr", 0, 1),
                            hp.Float("momentum", 0, 1)],
                           conditions=[hp.Condition("momentum", "optimizer", values=["sgd"])])

    class Widening:  # the band grows with momentum
        def predict(self, X, return_std=False):
            m = np.nan_to_num(X[:, 2])
            return (m, 0.01 + m) if return_std else m

    pd = hp.partial_dependence(Widening(), "momentum", space=space, grid_size=5, n_samples=200,
                               seed=0)
    tree = hp.confidence_split(pd, max_splits=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = [tree.confidence_at(tree.root, v) for v in (0.0, 0.5, 1.0)]
    np.testing.assert_allclose(read, tree.root.std.reshape(-1)[[0, 2, 4]])
    assert read[0] < read[1] < read[2]


def test_delta_of_a_band_that_is_nothing_is_nan_not_an_error():
    # a forest on a constant objective: the whole space's band is 0, and delta_improvement
    # divided by it (to_frame and the repr already said NaN)
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(40, seed=0)
    with pytest.warns(hp.exceptions.ConstantObjectiveWarning):
        result = hp.fanova(hp.TrialHistory(space, configs, [1.0] * 40), seed=0,
                           surrogate=hp.Forest(n_trees=8))
    tree = hp.confidence_split(hp.partial_dependence(result, "x", n_samples=50, seed=0))
    assert np.isnan(tree.delta_improvement(tree.root))


def test_the_split_does_not_depend_on_the_objective_s_scale() -> None:
    # the impurity scales with the objective's fourth power: an objective spanning about
    # 1e-3 had every gain below an absolute tolerance of 1e-12, and the first column with
    # a valid split (lr) won over the one that splits (c)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def f(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        lr = t.suggest_float("lr", 1e-4, 1, log=True)
        c = t.suggest_categorical("c", ["a", "b", "c"])
        t.suggest_float("n1", 0, 1)
        return (x - 0.3) ** 2 + 0.1 * (math.log10(lr) + 2) ** 2 + {"a": 0, "b": 0.3, "c": 0.6}[c]

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(f, n_trials=120)
    history = hp.adapters.from_optuna(study)
    splits = []
    for scale in (1.0, 1e-3, 1e-6):
        scaled = hp.TrialHistory(history.space, history.configs, scale * history.y)
        pdp = hp.partial_dependence(hp.fanova(scaled, seed=0), params="x", n_samples=500, seed=0)
        tree = hp.confidence_split(pdp, max_splits=1)
        splits.append([k.conditions for k in tree.root.children])
    assert splits[0][0][0].startswith("c in")
    assert splits[1] == splits[0]
    assert splits[2] == splits[0]
