"""Confidence regions of conditional search spaces: regions narrowed to search spaces
whose conditions are evaluated on the narrowed parents, splits only on parameters active
throughout their region, and routing of configurations without their inactive parameters."""

from __future__ import annotations

import logging
from types import MappingProxyType

import numpy as np
import pytest

import hpinsight as hp
from hpinsight import AnyOf, Categorical, Condition, Float, Int
from hpinsight.exceptions import InvalidDataError
from hpinsight.integrations._live import LiveFanova, LiveResults, RefitOptions

KERNELS = ["rbf", "linear", "poly"]


@pytest.fixture
def make_svm_space():
    """An SVM-like space without defaults: gamma under rbf/poly, degree under poly only,
    coef0 under degree > 2, tol under C > 1, shrink under poly or C > 2."""

    def make(*, c_kind: str = "float") -> hp.SearchSpace:
        c = Float("C", 0.1, 10.0, log=True) if c_kind == "float" else Int("C", 0, 4)
        return hp.SearchSpace(
            [
                Float("x", 0.0, 1.0),
                Categorical("kernel", KERNELS),
                Float("gamma", 0.0, 1.0),
                Int("degree", 2, 5),
                Float("coef0", 0.0, 1.0),
                c,
                Float("tol", 1e-5, 1e-1, log=True),
                Categorical("shrink", [True, False]),
            ],
            conditions=[
                Condition("gamma", "kernel", values=["rbf", "poly"]),
                Condition("degree", "kernel", values=["poly"]),
                Condition("coef0", "degree", gt=2),
                Condition("tol", "C", gt=1.0),
                AnyOf([Condition("shrink", "kernel", values=["poly"]),
                       Condition("shrink", "C", gt=2.0)]),
            ],
        )

    return make


class GammaNoise:
    """Mean x; predictive std set by gamma (drawn everywhere, as in the PDP's sample):
    large above 0.7, and far more so where the kernel reads gamma (rbf, poly). Gamma
    is then the best split of the whole space, although it is inactive under linear."""

    def __init__(self, space: hp.SearchSpace) -> None:
        self.ix, self.ik, self.ig = (space.index(n) for n in ("x", "kernel", "gamma"))
        self.linear = KERNELS.index("linear")

    def predict(self, X, return_std=False):
        high = X[:, self.ig] > 0.7
        s = np.where(X[:, self.ik] != self.linear, np.where(high, 2.0, 0.2),
                     np.where(high, 0.5, 0.2))
        return (X[:, self.ix], s) if return_std else X[:, self.ix]


@pytest.fixture
def make_tree(make_svm_space):
    """A confidence split of the x-PDP of :class:`GammaNoise` on the SVM-like space."""

    def make(*, max_splits: int = 3, c_kind: str = "float") -> hp.results.RegionsResult:
        space = make_svm_space(c_kind=c_kind)
        pd = hp.partial_dependence(GammaNoise(space), "x", space=space, grid_size=4, n_samples=400,
                                   seed=0)
        return hp.confidence_split(pd, max_splits=max_splits)

    return make


def _region(tree: hp.results.RegionsResult, bounds: dict) -> hp.results.RegionNode:
    """A hand-made region of ``tree``'s space with the given bounds."""
    return hp.results.RegionNode(conditions=(), bounds=bounds, indices=np.arange(0), mean=tree.pd.mean,
                         variance=tree.pd.variance, impurity=0.0, depth=1)


def _path(tree: hp.results.RegionsResult, leaf: hp.results.RegionNode) -> list[hp.results.RegionNode]:
    """The internal nodes from the root down to ``leaf``."""
    out, node = [], tree.root
    while node is not leaf:
        out.append(node)
        left, right = node.children
        node = left if any(x is leaf for x in _subtree(left)) else right
    return out


def _subtree(node: hp.results.RegionNode) -> list[hp.results.RegionNode]:
    return [node] if node.is_leaf else [node, *_subtree(node.left), *_subtree(node.right)]


def _holds(space: hp.SearchSpace, node: hp.results.RegionNode, config: dict) -> bool:
    """Whether ``config`` lies in the region, read from its bounds (lower bounds above the
    parameter's own are split thresholds, excluded)."""
    for name, b in node.bounds.items():
        param = space[name]
        if isinstance(param, Categorical):
            if config[name] not in b:
                return False
        elif not ((b[0] < config[name] or b[0] <= param.low) and config[name] <= b[1]):
            return False
    return True


def _assert_consistent(space: hp.SearchSpace, narrowed: hp.SearchSpace) -> None:
    """Configurations of the narrowed space are configurations of the original one with the
    same activity: encoding raises for a missing active parameter and warns (an error
    here) for a present inactive one."""
    configs = narrowed.sample(300, seed=0)
    space.encode(configs)
    for config in configs[:50]:
        for name in space.names:
            assert (name in config) == space.is_active(name, config), (name, config)


# ------------------------------------------------------------------ to_search_space
@pytest.mark.parametrize(
    ("bounds", "gone", "conditions"),
    [
        ({"kernel": ("rbf", "linear")}, {"degree", "coef0"},
         {Condition("gamma", "kernel", values=["rbf"]), Condition("tol", "C", gt=1.0),
          Condition("shrink", "C", gt=2.0)}),
        ({"kernel": ("linear",)}, {"gamma", "degree", "coef0"},
         {Condition("tol", "C", gt=1.0), Condition("shrink", "C", gt=2.0)}),
        ({"kernel": ("rbf", "poly")}, set(),
         {Condition("degree", "kernel", values=["poly"]), Condition("coef0", "degree", gt=2),
          Condition("tol", "C", gt=1.0),
          AnyOf([Condition("shrink", "kernel", values=["poly"]),
                 Condition("shrink", "C", gt=2.0)])}),
        ({"kernel": ("poly",)}, set(), {Condition("coef0", "degree", gt=2),
                                        Condition("tol", "C", gt=1.0)}),
        ({"kernel": ("poly",), "degree": (2.5, 5)}, set(), {Condition("tol", "C", gt=1.0)}),
        # always true on degree, but degree itself is conditional: "coef0 where degree is"
        ({"kernel": ("rbf", "poly"), "degree": (2.5, 5)}, set(),
         {Condition("degree", "kernel", values=["poly"]), Condition("coef0", "degree", gt=2),
          Condition("tol", "C", gt=1.0),
          AnyOf([Condition("shrink", "kernel", values=["poly"]),
                 Condition("shrink", "C", gt=2.0)])}),
        # degree narrowed to the single value 3: the gt condition is evaluated on it
        ({"kernel": ("rbf", "poly"), "degree": (2.5, 3.0)}, set(),
         {Condition("degree", "kernel", values=["poly"]),
          Condition("coef0", "degree", values=[3]), Condition("tol", "C", gt=1.0),
          AnyOf([Condition("shrink", "kernel", values=["poly"]),
                 Condition("shrink", "C", gt=2.0)])}),
        ({"kernel": ("poly",), "degree": (1.5, 2.5)}, {"coef0"},
         {Condition("tol", "C", gt=1.0)}),
        ({"kernel": ("linear",), "C": (0.1, 0.5)}, {"gamma", "degree", "coef0", "tol", "shrink"},
         set()),
    ],
    ids=["poly-cut", "linear-only", "rbf-poly", "poly-only", "poly-high-degree",
         "rbf-poly-high-degree", "degree-single-value", "degree-2-only", "nothing-conditional"],
)
def test_to_search_space_evaluates_conditions_on_the_narrowed_parents(
    make_tree, bounds, gone, conditions
):
    tree = make_tree(max_splits=0)
    space = tree.pd.space
    narrowed = tree.to_search_space(_region(tree, bounds))
    assert narrowed.names == tuple(n for n in space.names if n not in gone)
    assert set(narrowed.conditions) == conditions
    _assert_consistent(space, narrowed)


@pytest.mark.parametrize(
    ("c_kind", "c_bounds", "c_param", "tol"),
    [
        ("float", (2.0, 10.0), Float("C", 2.0, 10.0, log=True), "always"),
        ("float", (0.1, 0.5), Float("C", 0.1, 0.5, log=True), "never"),
        ("float", (0.5, 3.0), Float("C", 0.5, 3.0, log=True), "sometimes"),
        ("float", (2.0, 2.0), Categorical("C", [2.0]), "always"),
        ("float", (0.5, 0.5), Categorical("C", [0.5]), "never"),
        ("int", (1.0, 4.0), Int("C", 2, 4), "always"),  # a split at 1: the region is C > 1
        ("int", (0.0, 1.5), Int("C", 0, 1), "never"),
        ("int", (1.5, 2.5), Categorical("C", [2]), "always"),
        ("int", (0.5, 1.5), Categorical("C", [1]), "never"),
    ],
    ids=["above-1", "below-1", "across-1", "single-above", "single-below",
         "int-above-threshold-1", "int-below", "int-single-2", "int-single-1"],
)
def test_to_search_space_resolves_numeric_conditions(make_tree, c_kind, c_bounds, c_param, tol):
    tree = make_tree(max_splits=0, c_kind=c_kind)
    space = tree.pd.space
    narrowed = tree.to_search_space(_region(tree, {"C": c_bounds}))
    assert narrowed["C"] == c_param
    assert ("tol" in narrowed) == (tol != "never")
    assert bool("tol" in narrowed and narrowed.conditions_of("tol")) == (tol == "sometimes")
    if tol == "sometimes":
        assert narrowed.conditions_of("tol") == (Condition("tol", "C", gt=1.0),)
    _assert_consistent(space, narrowed)


def test_every_region_of_a_conditional_split_becomes_a_usable_search_space(make_tree):
    tree = make_tree(max_splits=3)
    space = tree.pd.space
    assert len(tree.leaves()) == 4
    assert any("gamma" not in tree.to_search_space(leaf) for leaf in tree.leaves())
    for node in _subtree(tree.root):
        narrowed = tree.to_search_space(node)
        _assert_consistent(space, narrowed)
        for config in narrowed.sample(100, seed=1):
            leaf = tree.leaf_for(config)
            assert leaf is node or any(leaf is x for x in _subtree(node))


# ------------------------------------------------------------------ split candidates
def test_no_split_names_a_parameter_inactive_somewhere_in_its_region(make_tree):
    tree = make_tree(max_splits=3)
    space = tree.pd.space
    samples = tree.pd.samples
    active = space.active_mask(samples)
    splits = [node for node in _subtree(tree.root) if node.split is not None]
    # the noise is in gamma, which is active under rbf and poly only: the tree
    # first separates the kernels, then splits on gamma where gamma exists
    assert [node.split[0] for node in splits].count("gamma") >= 1
    # without the conditions, the same sample is split on gamma first
    free = hp.SearchSpace(space.params)
    unconditional = hp.partial_dependence(GammaNoise(free), "x", space=free, grid_size=4,
                                          n_samples=400, seed=0)
    assert hp.confidence_split(unconditional, max_splits=1).root.split[0] == "gamma"
    for node in splits:
        name = node.split[0]
        assert active[node.indices, space.index(name)].all(), node
    for leaf in tree.leaves():
        named = {cond.split()[0] for cond in leaf.conditions}
        assert named == {node.split[0] for node in _path(tree, leaf)}
        narrowed = tree.to_search_space(leaf)
        for config in narrowed.sample(200, seed=2):
            for name in named:
                assert space.is_active(name, config), (leaf, name, config)


def test_a_conditional_parameter_splits_only_below_its_parent_split(make_tree):
    tree = make_tree(max_splits=3)
    assert tree.root.split[0] != "gamma"
    for node in _subtree(tree.root):
        if node.split is not None and node.split[0] == "gamma":
            assert set(node.bounds["kernel"]) <= {"rbf", "poly"}


# ------------------------------------------------------------------ routing
@pytest.mark.parametrize(
    "config",
    [
        {"x": 0.5, "kernel": "linear", "C": 0.5},
        {"x": 0.5, "kernel": "linear", "C": 9.0, "tol": 1e-3, "shrink": False},
        {"x": 0.5, "kernel": "linear", "C": 0.5, "gamma": None, "degree": None},
        {"x": 0.5, "kernel": "rbf", "gamma": 0.9, "C": 0.5},
        {"x": 0.5, "kernel": "rbf", "gamma": 0.1, "C": 0.5},
        {"x": 0.5, "kernel": "poly", "gamma": 0.1, "degree": 2, "C": 0.5, "shrink": True},
    ],
    ids=["linear", "linear-large-C", "linear-with-none", "rbf-high-gamma", "rbf-low-gamma",
         "poly"],
)
def test_leaf_for_routes_without_the_inactive_parameters(make_tree, config):
    tree = make_tree(max_splits=3)
    space = tree.pd.space
    space.encode([{k: v for k, v in config.items() if v is not None}])  # a valid configuration
    leaf = tree.leaf_for(config)
    assert [x for x in tree.leaves() if _holds(space, x, config)] == [leaf]
    assert all(config.get(name) is not None for name in leaf.bounds)


@pytest.mark.parametrize(
    ("config", "error", "match"),
    [
        ({"x": 0.5, "kernel": "rbf", "C": 0.5}, KeyError, "needs a value for 'gamma'"),
        ({"x": 0.5, "kernel": "linear"}, KeyError, "needs a value for 'C'"),
        ({"x": 0.5}, KeyError, "needs a value for 'kernel'"),
        ({"x": 0.5, "kernel": "sigmoid"}, InvalidDataError, "not one of its choices"),
        ({"x": 0.5, "kernel": "rbf", "gamma": "high"}, InvalidDataError, "finite number"),
    ],
    ids=["active-child-missing", "unconditional-missing", "parent-missing", "unknown-choice",
         "not-a-number"],
)
def test_leaf_for_errors(make_tree, config, error, match):
    tree = make_tree(max_splits=3)
    with pytest.raises(error, match=match):
        tree.leaf_for(config)


class _Live(LiveResults):
    def __init__(self, fitter: LiveFanova) -> None:
        self._fitter = fitter


@pytest.mark.parametrize(
    "incumbent",
    [
        {"x": 0.2, "kernel": "linear", "C": 0.5},
        {"x": 0.2, "kernel": "rbf", "gamma": 0.3, "C": 5.0, "tol": 1e-3, "shrink": True},
    ],
    ids=["gamma-inactive", "degree-inactive"],
)
def test_incumbent_regions_route_inactive_parameters_without_defaults(make_tree, incumbent):
    tree = make_tree(max_splits=3)
    assert tree.pd.space.defaults == {}  # as for Optuna spaces
    fitter = LiveFanova(RefitOptions(seed=0, isolation="thread", regions=1),
                        logger=logging.getLogger(__name__))
    fitter.latest_regions = MappingProxyType({"x": tree})
    fitter.latest_incumbent = MappingProxyType(incumbent)
    region = _Live(fitter).incumbent_regions["x"]
    assert region is tree.leaf_for(incumbent)
    assert [x for x in tree.leaves() if _holds(tree.pd.space, x, incumbent)] == [region]
