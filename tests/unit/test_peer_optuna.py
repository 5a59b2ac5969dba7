"""Agreement with Optuna's fANOVA tree code evaluated on the same scikit-learn forest."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

import hpinsight as hp

_tree = pytest.importorskip("optuna.importance._fanova._tree")


@pytest.mark.parametrize("seed", [0, 1])
def test_main_effects_equal_optuna_fanova_tree(seed):
    space = hp.SearchSpace([hp.Float("a", 0.0, 1.0), hp.Float("b", -5.0, 5.0), hp.Float("c", 10.0, 20.0)])
    configs = space.sample(300, seed=seed)
    X = space.encode(configs)
    y = np.sin(4 * X[:, 0]) + 0.1 * X[:, 1] ** 2 + X[:, 0] * X[:, 2]
    forest = RandomForestRegressor(n_estimators=8, random_state=seed).fit(X, y)
    ours = hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest.from_estimator(forest))
    bounds = np.array([[0.0, 1.0], [-5.0, 5.0], [10.0, 20.0]])
    for t, est in enumerate(forest.estimators_):
        peer = _tree._FanovaTree(est.tree_, bounds)
        for j, name in enumerate(space.names):
            expected = peer.get_marginal_variance(np.array([j])) / peer.variance
            assert ours.fractions[t, ours.subsets.index((name,))] == pytest.approx(expected, abs=1e-9)
