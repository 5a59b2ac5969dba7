"""The exact functional ANOVA of a forest: each tree's leaf partition decomposed into the
variance of every subset's effect (Hutter, Hoos & Leyton-Brown 2014, Algorithm 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...space import measure_of
from ._tree import compute_partition, main_effects, pair_effects, subset_effect, subset_variance

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from ...space import SearchSpace
    from ._forest import FittedForest
    from ._tree import Partition


def decompose_tree(
    part: Partition, subsets: Sequence[tuple[int, ...]], max_order: int
) -> NDArray[np.float64]:
    """``V_U`` of one tree for each subset (sorted column tuples), Algorithm 2."""
    out = np.zeros(len(subsets))
    if part.variance == 0:
        return out
    mains, v_main = main_effects(part)
    pos = {s: k for k, s in enumerate(subsets)}
    for j in range(len(mains)):
        if (j,) in pos:
            out[pos[(j,)]] = v_main[j]
    if max_order < 2:
        return out
    pairs = [s for s in subsets if len(s) == 2]
    v_pair, f_pair = pair_effects(part, mains, pairs, keep=max_order >= 3)
    for s, v in v_pair.items():
        out[pos[s]] = v
    if max_order < 3:
        return out
    lower: dict[tuple[int, ...], NDArray[np.float64]] = {(j,): mains[j] for j in range(len(mains))}
    for pair, f_ij in f_pair.items():
        lower[pair] = f_ij
    for cols in subsets:
        if len(cols) >= 3:
            f = subset_effect(part, cols, lower)
            lower[cols] = f
            out[pos[cols]] = subset_variance(part, cols, f)
    return out


def decompose_forest(
    model: FittedForest, space: SearchSpace, index_subsets: Sequence[tuple[int, ...]], max_order: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``V_U`` per tree and subset, and each tree's variance and mean over the space."""
    measures = [measure_of(p) for p in space.params]
    variances = np.empty((len(model.trees), len(index_subsets)))
    tree_var = np.empty(len(model.trees))
    tree_mean = np.empty(len(model.trees))
    for t, tree in enumerate(model.trees):
        part = compute_partition(tree, measures)
        tree_var[t] = part.variance
        tree_mean[t] = part.mean
        variances[t] = decompose_tree(part, index_subsets, max_order)
    return variances, tree_var, tree_mean
