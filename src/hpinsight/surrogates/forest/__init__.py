"""The random forest of the functional ANOVA paper (Hutter, Hoos & Leyton-Brown 2014).

* ``_forest``: fit or accept scikit-learn forests and copy their trees into frozen
  arrays (the only code that reads ``estimator.tree_``); inactive values imputed;
* ``_tree``: each tree's exact leaf partition of the space, and its marginals;
* ``_decompose``: the variance of every subset's effect, per tree (Algorithm 2);
* ``_routing``: trees trained on imputed inactive values, restated on the product space;
* ``_instances``: a SMAC run's per-instance costs averaged through a forest on instance
  features (Hutter et al. 2014, Sec. 3.3).
"""

from ._decompose import decompose_forest, decompose_tree
from ._forest import (
    FittedForest,
    TreeArrays,
    copy_tree,
    fit_forest,
    forest_from_estimator,
    impute_inactive,
    why_not_a_mean_of_trees,
)
from ._instances import average_over_instances
from ._routing import route_inactive
from ._tree import Partition, compute_partition, marginal_grid

__all__ = [
    "FittedForest",
    "Partition",
    "TreeArrays",
    "average_over_instances",
    "compute_partition",
    "copy_tree",
    "decompose_forest",
    "decompose_tree",
    "fit_forest",
    "forest_from_estimator",
    "impute_inactive",
    "marginal_grid",
    "route_inactive",
    "why_not_a_mean_of_trees",
]
