"""Trees trained on constant-imputed inactive entries, restated on the product space:
every point predicts what the original tree predicts at the configuration it stands for."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import hpinsight as hp
from hpinsight.exceptions import ConstantObjectiveWarning
from hpinsight.surrogates.forest import FittedForest, copy_tree, route_inactive


def nested_space() -> hp.SearchSpace:
    return hp.SearchSpace(
        [
            hp.Categorical("kernel", ["rbf", "linear", "poly", "sigmoid"]),
            hp.Float("gamma", 1e-4, 10.0, log=True),
            hp.Int("degree", 2, 5),
            hp.Float("coef0", -1.0, 1.0),
            hp.Float("C", 1e-3, 1e3, log=True),
            hp.Float("tol", 1e-5, 1e-1, log=True),
            hp.Int("shrink", 1, 64, log=True),
            hp.Float("x", -3.0, 3.0),
        ],
        conditions=[
            hp.Condition("gamma", "kernel", values=["rbf", "poly", "sigmoid"]),
            hp.Condition("degree", "kernel", values=["poly"]),
            hp.AnyOf([hp.Condition("coef0", "kernel", values=["poly"]),
                      hp.Condition("coef0", "gamma", gt=1.0)]),  # either of two parents
            hp.Condition("tol", "C", gt=1.0),  # a log parent, bound inside its range
            hp.Condition("tol", "C", lt=100.0),  # ... and a second condition (AND)
            hp.Condition("shrink", "degree", values=[3, 4]),  # a grandchild of kernel
        ],
    )


def imputed(space: hp.SearchSpace, X: np.ndarray, above: bool) -> tuple[np.ndarray, np.ndarray]:
    """SMAC-style constant imputation: outside each column's range, below or above it."""
    fill = np.where(above, np.nanmax(X, axis=0) + 1.0, np.nanmin(X, axis=0) - 1.0)
    return np.where(np.isnan(X), fill, X), fill


@pytest.mark.parametrize("above", [False, True], ids=["imputed-below", "imputed-above"])
def test_every_point_predicts_what_the_tree_predicts_at_its_configuration(above: bool) -> None:
    space = nested_space()
    rng = np.random.default_rng(0)
    X = space.encode(space.sample(600, seed=0))
    y = (X[:, 0] * 1.5 + np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 2]) * 0.3
         + np.where(np.isnan(X[:, 5]), 2.0, X[:, 5] * 0.2) + rng.normal(0, 0.1, 600))
    X_fit, fill = imputed(space, X, above)
    rf = RandomForestRegressor(n_estimators=8, min_samples_leaf=2, random_state=0).fit(X_fit, y)
    test = space.encode(space.sample(3000, seed=1))
    test_imputed = np.where(np.isnan(test), fill, test)
    n_split = 0
    for estimator in rf.estimators_:
        tree = copy_tree(estimator)
        inner = tree.left >= 0
        inactive_left = inner & (fill[np.where(inner, tree.feature, 0)].astype(np.float32)
                                 <= tree.threshold)
        routed = route_inactive(tree, space, inactive_left)
        expected = tree.value[tree.apply(test_imputed)]
        # at configurations, NaN marking inactive entries
        np.testing.assert_array_equal(routed.value[routed.apply(test)], expected)
        # at points of the product space standing for them: inactive values do not count
        anything = np.where(np.isnan(test), space.encode(space.sample(3000, seed=2)), test)
        anything = np.where(np.isnan(anything), rng.uniform(-5, 5, test.shape), anything)
        np.testing.assert_array_equal(routed.value[routed.apply(anything)], expected)
        n_split += int(np.isin(tree.feature[inner], [1, 2, 3, 5, 6]).sum())
    assert n_split > 0  # the forest did split on conditional parameters


def test_a_tree_without_conditional_splits_is_returned_as_it_is() -> None:
    space = nested_space()
    X = space.encode(space.sample(200, seed=0))
    rf = RandomForestRegressor(n_estimators=1, max_features=None, random_state=0).fit(
        np.nan_to_num(X[:, [0, 4, 7]]), X[:, 7] ** 2)
    tree = copy_tree(rf.estimators_[0])
    # re-index the features onto the unconditional columns kernel, C and x
    moved = type(tree)(tree.left, tree.right, np.array([0, 4, 7])[np.maximum(tree.feature, 0)],
                       tree.threshold, tree.value)
    assert route_inactive(moved, space, np.zeros(len(tree.left), bool)) is moved


def test_the_functional_anova_of_a_routed_forest_leaves_inactive_parameters_out() -> None:
    # y depends on kernel only; a constant imputation lets the tree split on gamma's imputed
    # value (= "kernel is linear"), which the routed tree must express through kernel itself
    space = hp.SearchSpace(
        [hp.Categorical("kernel", ["rbf", "linear"]), hp.Float("gamma", 0.0, 1.0)],
        conditions=[hp.Condition("gamma", "kernel", values=["rbf"])],
    )
    X = space.encode(space.sample(400, seed=0))
    y = np.where(X[:, 0] == 1.0, 3.0, 0.0)
    X_fit = np.where(np.isnan(X), -1.0, X)
    # a tree that reads gamma alone: gamma's imputed -1 tells linear from rbf
    fitted = copy_tree(DecisionTreeRegressor(random_state=0).fit(X_fit[:, 1:], y))
    inner = fitted.left >= 0
    tree = type(fitted)(fitted.left, fitted.right, np.where(inner, 1, fitted.feature),
                        fitted.threshold, fitted.value)
    routed = route_inactive(tree, space, inner & (tree.threshold >= -1.0))
    assert set(routed.feature[routed.left >= 0]) == {0}  # it now reads kernel only
    result = hp.fanova(hp.TrialHistory(space, space.decode(X), y), surrogate=hp.Forest.from_estimator(FittedForest((routed,), 2)))
    assert result.importance("kernel").mean == pytest.approx(1.0)
    assert result.importance("gamma").mean == pytest.approx(0.0, abs=1e-12)
    # read as it was, the tree sends every active gamma one way: kernel's effect was lost
    with pytest.warns(ConstantObjectiveWarning):
        hp.fanova(hp.TrialHistory(space, space.decode(X), y), surrogate=hp.Forest.from_estimator(FittedForest((tree,), 2)))
