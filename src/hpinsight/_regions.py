"""Confidence splitting: regions of the search space where a PDP can be trusted.

Moosbauer et al. (NeurIPS 2021), Sec. 5 and Algorithm 1. The Monte Carlo sample of
a :class:`~hpinsight.results.PartialDependenceResult` is split recursively, CART-like, on the
parameters *not* in the PDP (``C``), so that every region keeps the whole range of
``λ_S``. A split is chosen to minimise the impurity of Eq. (6): for each child, the
L2 spread of its ICE curves of the predictive variance around their mean, summed over
the grid,

    R(N') = Σ_g Σ_(i ∈ N') (ŝ²(λ_S^g, λ_C^i) − ŝ²_(S|N')(λ_S^g))².

Candidate splits: every threshold between distinct sample values of a numerical
parameter (in the encoded coordinate, so log parameters split in log space), and
for a categorical parameter every subset of its levels when it has at most
``exact_levels`` levels, else the splits along the levels ordered by the first
principal component of their mean variance curves (the ordering shortcut of
Coppersmith et al. for multi-output CART; exact for one grid point). Every scan is
a cumulative sum over the sorted sample, so a split costs ``O(n G)`` per parameter.

Growth is breadth first: every node at one depth is split (if its best split meets
``min_node_size`` and improves the impurity by ``min_improvement``, relative to the
root's) before the next depth, until ``max_splits`` splits are made. One split is a
depth-1 tree; three splits a full depth-2 tree, as in the paper's Table 1.

Where we differ: conditional parameters, which the paper does not treat. The Monte
Carlo sample draws every parameter everywhere (as for fANOVA), so a conditional
parameter has sample values even where its conditions make it inactive, and a split
on it there would describe values that do not exist ("kernel in {'linear'} and
gamma <= 0.85" although gamma is inactive under the linear kernel). A split on a
parameter is therefore a candidate only in a region where that parameter is active
for every configuration of the region, judged from the region's bounds on its
parents (an :class:`~hpinsight.AnyOf` counts as active everywhere when one of its
conditions always holds). In consequence a configuration routes to its region by the
values of its active parameters alone, and a region narrows to a search space whose
conditions are those of the original space evaluated on the narrowed parents.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ._regions_result import RegionNode, RegionsResult
from ._validation import check_int, check_real
from .exceptions import InvalidArgumentError, InvalidArgumentTypeError
from .space import Categorical, SearchSpace, active_everywhere

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._pdp import PartialDependenceResult

__all__ = ["confidence_split"]

_FUNC = "confidence_split"


def confidence_split(
    pd: PartialDependenceResult,
    *,
    max_splits: int = 3,
    min_node_size: int | None = None,
    min_improvement: float = 0.0,
    exact_levels: int = 8,
) -> RegionsResult:
    """Split the space into regions where the PDP is more certain (Algorithm 1).

    Parameters
    ----------
    pd : PartialDependenceResult
        From :func:`hpinsight.partial_dependence`; its ICE variance curves and
        Monte Carlo sample are split.
    max_splits : int, default=3
        Splits in all (breadth first; 1 = depth 1, 3 = a full depth-2 tree).
    min_node_size : int, optional
        Fewest samples in a region (default: 5 % of the sample, at least 10).
    min_improvement : float, default=0.0
        Smallest impurity reduction of a split, as a fraction of the root's.
    exact_levels : int, default=8
        Categoricals with up to this many levels are split over every subset.

    Returns
    -------
    RegionsResult

    Notes
    -----
    A conditional parameter is a split candidate only in regions where it is
    active for every configuration, as decided from the region's bounds on its
    parents (see the module docstring); where it may be inactive its sample
    values describe nothing, and splitting on them would make regions such as
    "kernel in {'linear'} and gamma <= 0.85".

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(200, seed=0)
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] + c["z"] ** 2 for c in configs]), seed=0)
    >>> pd = hp.partial_dependence(r, params="x", n_samples=300, seed=0)
    >>> tree = hp.confidence_split(pd, max_splits=1)
    >>> [leaf.conditions[0].split()[0] for leaf in tree.leaves()]
    ['z', 'z']
    """
    from ._pdp import PartialDependenceResult  # here: at module level it closes an import circle

    if not isinstance(pd, PartialDependenceResult):
        raise InvalidArgumentTypeError(
            f"The 'pd' parameter of {_FUNC} must be a PartialDependenceResult. Got "
            f"{type(pd).__name__} instead: split a PDP, e.g. "
            f"{_FUNC}(hp.partial_dependence(result, params='lr')).")
    if pd.variance_method != "pointwise":
        # a region's band is the mean of its samples' ICE variances (Eq. 5); Eq. 4 needs
        # the posterior covariance between them, which the PDP does not keep. Split, the
        # whole space's band (Eq. 4) stood beside regions' bands of another equation, up
        # to 2.3 times wider, and every region looked less certain than the whole
        raise InvalidArgumentError(
            f"{_FUNC} splits on the mean of the ICE curves' variances (Eq. 5), which each "
            "region's samples give; this PDP's band is the variance of its mean (Eq. 4, "
            "variance='covariance'), which a region cannot be given, so the regions would "
            "not be comparable with it. Split a PDP computed with variance='pointwise' "
            "(the default).")
    n = pd.n_samples
    max_splits = int(check_int(max_splits, "max_splits", _FUNC, minimum=0))
    min_size = max(10, int(0.05 * n)) if min_node_size is None else int(
        check_int(min_node_size, "min_node_size", _FUNC, minimum=1))
    min_gain = check_real(min_improvement, "min_improvement", _FUNC, low=0.0, high=1.0)
    exact = int(check_int(exact_levels, "exact_levels", _FUNC, minimum=2))
    V = pd.ice_variance.reshape(n, -1)
    M = pd.ice_mean.reshape(n, -1)
    space = pd.space
    split_cols = [j for j, name in enumerate(space.names) if name not in pd.params]
    shape = pd.mean.shape

    def candidates(bounds: Mapping[str, Any]) -> list[int]:
        """The split columns active for every configuration of the region ``bounds``."""
        if not space.conditional_names:
            return split_cols
        active = active_everywhere(space, bounds)
        return [j for j in split_cols if space.names[j] in active]

    def make(idx: NDArray[np.intp], conditions: tuple[str, ...], bounds: dict[str, Any],
             depth: int) -> dict[str, Any]:
        return {"idx": idx, "conditions": conditions, "bounds": bounds, "depth": depth,
                "impurity": _impurity(V[idx]), "split": None, "children": None}

    root = make(np.arange(n), (), {}, 0)
    root_impurity = root["impurity"]
    frontier = [root]
    n_splits = 0
    while frontier and n_splits < max_splits:
        next_frontier = []
        for node in frontier:
            if n_splits >= max_splits:
                break
            best = _best_split(pd, V, node["idx"], node["impurity"], candidates(node["bounds"]),
                               min_size, exact)
            if best is None:
                continue
            gain, col, rule, left_mask = best
            if gain <= min_gain * root_impurity or gain <= 0.0:
                continue
            name = space.names[col]
            idx = node["idx"]
            left_cond, right_cond, left_b, right_b = _describe(space, pd, col, rule, node["bounds"])
            node["split"] = (name, rule)
            node["children"] = [
                make(idx[left_mask], (*node["conditions"], left_cond), left_b, node["depth"] + 1),
                make(idx[~left_mask], (*node["conditions"], right_cond), right_b,
                     node["depth"] + 1),
            ]
            n_splits += 1
            next_frontier.extend(node["children"])
        frontier = next_frontier

    def freeze(node: dict[str, Any]) -> RegionNode:
        idx = node["idx"]
        kids = node["children"]
        return RegionNode(
            conditions=node["conditions"],
            bounds=dict(node["bounds"]),
            indices=_ro(idx),
            mean=_ro(M[idx].mean(axis=0).reshape(shape)),
            variance=_ro(V[idx].mean(axis=0).reshape(shape)),
            impurity=float(node["impurity"]),
            depth=int(node["depth"]),
            split=node["split"],
            left=None if kids is None else freeze(kids[0]),
            right=None if kids is None else freeze(kids[1]),
        )

    return RegionsResult(freeze(root), pd)


# ---------------------------------------------------------------------------- internals
def _impurity(V: NDArray[np.float64]) -> float:
    """Eq. (6): Σ_g Σ_i (v_ig − mean_g)²."""
    if V.shape[0] == 0:
        return 0.0
    return float(((V - V.mean(axis=0)) ** 2).sum())


def _scan(V: NDArray[np.float64], order: NDArray[np.intp]) -> NDArray[np.float64]:
    """Impurity of left + right for every prefix split of ``V[order]`` (length n - 1)."""
    Vs = V[order]
    n = Vs.shape[0]
    csum = np.cumsum(Vs, axis=0)  # (n, G)
    csq = np.cumsum((Vs**2).sum(axis=1))  # (n,)
    total, total_sq = csum[-1], csq[-1]
    k = np.arange(1, n)
    left = csq[:-1] - (csum[:-1] ** 2).sum(axis=1) / k
    right_sum = total - csum[:-1]
    right = (total_sq - csq[:-1]) - (right_sum**2).sum(axis=1) / (n - k)
    return np.asarray(left + right, dtype=np.float64)


def _best_split(
    pd: PartialDependenceResult,
    V_all: NDArray[np.float64],
    idx: NDArray[np.intp],
    parent: float,
    cols: list[int],
    min_size: int,
    exact: int,
) -> tuple[float, int, Any, NDArray[np.bool_]] | None:
    """The split of the node ``idx`` (impurity ``parent``) that reduces Eq. (6) most."""
    V = V_all[idx]
    n = idx.size
    if n < 2 * min_size:
        return None
    best: tuple[float, int, Any, NDArray[np.bool_]] | None = None
    for col in cols:
        x = pd.samples[idx, col]
        param = pd.space.params[col]
        if isinstance(param, Categorical):
            found = _categorical_split(V, x, len(param.choices), min_size, exact)
            if found is None:
                continue
            cost, left_levels = found
            mask = np.isin(x, left_levels)
            rule: Any = tuple(param.choices[int(i)] for i in left_levels)
        else:
            order = np.argsort(x, kind="stable")
            xs = x[order]
            costs = _scan(V, order)
            k = np.arange(1, n)
            valid = (xs[1:] > xs[:-1]) & (k >= min_size) & (n - k >= min_size)
            if not valid.any():
                continue
            costs = np.where(valid, costs, np.inf)
            at = int(np.argmin(costs))
            cost = float(costs[at])
            threshold = float((xs[at] + xs[at + 1]) / 2.0)
            mask = x <= threshold
            rule = threshold
        gain = parent - cost
        # ties within rounding of the parent's impurity keep the first column; relative, as
        # the impurity scales with the objective's fourth power (an objective spanning
        # 1e-3 had every gain below an absolute 1e-12, and its first column always won)
        if best is None or gain > best[0] + 1e-12 * parent:
            best = (gain, col, rule, mask)
    return best


def _categorical_split(
    V: NDArray[np.float64], x: NDArray[np.float64], n_levels: int, min_size: int, exact: int
) -> tuple[float, NDArray[np.intp]] | None:
    levels = np.arange(n_levels)
    counts = np.bincount(x.astype(np.intp), minlength=n_levels)
    present = levels[counts > 0]
    if present.size < 2:
        return None
    sums = np.zeros((n_levels, V.shape[1]))
    np.add.at(sums, x.astype(np.intp), V)
    sq = np.bincount(x.astype(np.intp), weights=(V**2).sum(axis=1), minlength=n_levels)
    total_sum, total_sq, n = sums.sum(axis=0), sq.sum(), x.size

    def cost_of(left: tuple[int, ...]) -> float:
        ls, lq, ln = sums[list(left)].sum(axis=0), sq[list(left)].sum(), counts[list(left)].sum()
        if ln < min_size or n - ln < min_size:
            return math.inf
        rs = total_sum - ls
        return float(lq - (ls**2).sum() / ln + (total_sq - lq) - (rs**2).sum() / (n - ln))

    if present.size <= exact:
        first, rest = int(present[0]), [int(p) for p in present[1:]]
        candidates = [(first, *c) for r in range(len(rest)) for c in itertools.combinations(rest, r)]
    else:  # order the levels along the first principal component of their mean curves
        means = sums[present] / counts[present, None]
        centred = means - np.average(means, axis=0, weights=counts[present])
        direction = np.linalg.svd(centred * np.sqrt(counts[present, None]),
                                  full_matrices=False)[2][0]
        ordered = [int(i) for i in present[np.argsort(centred @ direction, kind="stable")]]
        candidates = [tuple(ordered[:k]) for k in range(1, len(ordered))]
    scored = [(cost_of(c), c) for c in candidates]
    cost, left = min(scored, key=lambda t: t[0])
    if not math.isfinite(cost):
        return None
    return cost, np.asarray(left, dtype=np.intp)


def _describe(
    space: SearchSpace, pd: PartialDependenceResult, col: int, rule: Any, bounds: dict[str, Any]
) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    param = space.params[col]
    name = param.name
    if isinstance(param, Categorical):
        here = tuple(bounds.get(name, param.choices))
        chosen = {param.index_of(c) for c in rule}  # by position: True and 1 stay apart
        left = tuple(c for c in here if param.index_of(c) in chosen)
        right = tuple(c for c in here if param.index_of(c) not in chosen)
        def listed(choices: tuple[Any, ...]) -> str:  # in the parameter's own order
            return "{" + ", ".join(map(repr, choices)) + "}"

        return (f"{name} in {listed(left)}", f"{name} in {listed(right)}",
                {**bounds, name: left}, {**bounds, name: right})
    value = math.exp(rule) if param.log else rule  # the encoded coordinate is log for log=True
    low, high = bounds.get(name, (param.low, param.high))
    shown = f"{value:.4g}"
    return (f"{name} <= {shown}", f"{name} > {shown}",
            {**bounds, name: (low, min(high, value))}, {**bounds, name: (max(low, value), high)})


def _ro(a: NDArray[Any]) -> NDArray[Any]:
    out = np.array(a)
    out.flags.writeable = False
    return out
