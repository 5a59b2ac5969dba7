"""Average performance over instances (folds, problem instances) with a model of the runs.

Hutter, Hoos & Leyton-Brown (ICML 2014), Sec. 3.3: the data an optimizer logs are
runs of configuration ``θ_t`` on instance ``π_t`` with performance ``y_t``. When
configurations were run on different subsets of the instances -- as SMAC's
intensification does -- the plain mean of each configuration's runs mixes up how
good the configuration is with how hard its instances were. The paper instead fits
a random forest ``ŷ'(θ, π)`` on the runs and predicts, for every configuration in
the data, its average over all training instances,
``m̂_θ = 1/k Σ_i ŷ'(θ, π_i)``; the importance forest is then fit on ``(θ, m̂_θ)``.

Instances enter the run model through their features when the optimizer has them,
else as an index column (trees split an index into any groups of instances).
Inactive parameters are imputed from their measure, as for the importance forest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..._shared import spread_beyond_rounding
from ._forest import impute_inactive

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

    from ...space import SearchSpace

__all__ = ["average_over_instances"]


def average_over_instances(
    space: SearchSpace,
    configs: Sequence[Mapping[str, Any]],
    config_of_run: NDArray[np.intp],
    instance_of_run: NDArray[np.intp],
    y: NDArray[np.float64],
    features: NDArray[np.float64],
    *,
    n_trees: int = 64,
    seed: int | None = 0,
) -> NDArray[np.float64]:
    """Predicted mean performance of each configuration over all instances.

    Parameters
    ----------
    space : SearchSpace
    configs : sequence of mapping, length n_configs
        The distinct configurations.
    config_of_run, instance_of_run : ndarray of int, shape (n_runs,)
        For each run, the index of its configuration and of its instance.
    y : ndarray of shape (n_runs,)
        Performance of each run (finite).
    features : ndarray of shape (n_instances, n_features)
        One row per instance (its features, or just its index).
    n_trees, seed
        The run model: a ``RandomForestRegressor`` with this many trees.

    Returns
    -------
    ndarray of shape (n_configs,)
        ``m̂_θ`` for each configuration.
    """
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(np.random.SeedSequence(seed).generate_state(1)[0])
    X_cfg = impute_inactive(space, space.encode(list(configs)), rng)
    F = np.asarray(features, dtype=np.float64).reshape(len(features), -1)
    X_runs = np.hstack([X_cfg[config_of_run], F[instance_of_run]])
    model = RandomForestRegressor(n_estimators=n_trees, random_state=int(rng.integers(2**31)),
                                  n_jobs=1)
    # fitted to the standardized costs, as the analysis' forest is: scikit-learn makes a
    # node whose variance is below the float epsilon a leaf, so costs of 1e-8 times a
    # spread of 1 grew no split (every configuration averaged to one value), and an
    # offset of 1e8 cost the splits their precision (x's share 0.17 for 1.0)
    y = np.asarray(y, dtype=np.float64)
    center = float(y.mean()) if y.size else 0.0
    scale = spread_beyond_rounding(y) or 1.0
    model.fit(X_runs, (y - center) / scale)
    n_cfg, k = X_cfg.shape[0], F.shape[0]
    grid = np.hstack([np.repeat(X_cfg, k, axis=0), np.tile(F, (n_cfg, 1))])
    predicted = model.predict(grid).reshape(n_cfg, k).mean(axis=1)
    return np.asarray(center + scale * predicted, dtype=np.float64)
