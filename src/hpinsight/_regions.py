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

import dataclasses
import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._encoding import MAX_DISCRETE_VALUES, encode_value
from ._optional import import_optional
from ._params import AnyOf, Categorical, Condition, Float, Int
from ._pdp import PDBand
from ._shared import REPR_WIDTH, clip_text, grid_columns, json_array, json_value, step_index
from ._space import SearchSpace
from ._validation import check_int, check_real
from .exceptions import InvalidArgumentError, InvalidDataError, InvalidSpaceError, UnknownNameError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._params import ConditionLike, Parameter
    from ._pdp import PartialDependenceResult

__all__ = ["RegionNode", "RegionTree", "confidence_split"]

_FUNC = "confidence_split"


@dataclass(frozen=True, slots=True)
class RegionNode(PDBand):
    """One region of the tree: a box over the non-PDP parameters and its regional PDP.

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it knows neither its grid nor its parameters: its
    rows are those of :meth:`RegionTree.to_frame` with its ``node`` number, and its
    curve is drawn by :meth:`RegionTree.plot` (``highlight=node`` emphasizes it).

    Attributes
    ----------
    conditions : tuple of str
        The region, readable (``"momentum <= 0.42"``, ``"optimizer in {'adam'}"``).
    bounds : mapping of str to (low, high) or tuple of choices
        The same in native units, per restricted parameter. A ``low`` above the
        parameter's own lower bound is a split threshold the region lies strictly
        above (``> low``); ``high`` is inclusive.
    indices : ndarray of int
        Monte Carlo samples in the region.
    mean, variance : ndarray
        Regional PD (Eq. 3 over the region's ICE curves) and its variance (Eq. 5).
    impurity : float
        Eq. (6) of the region.
    depth : int
    split : tuple or None
        ``(name, threshold)`` for a numerical split (encoded coordinate; left is
        ``<=``) or ``(name, left_choices)`` for a categorical one.
    left, right : RegionNode or None

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(200, seed=0)
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] * c["z"] for c in configs]), seed=0, n_trees=8)
    >>> pd = hp.partial_dependence(r, params="x", grid_size=5, n_samples=100, seed=0)
    >>> root = hp.confidence_split(pd, max_splits=1).root
    >>> root.n_samples, sorted(root.to_dict())[:3]
    (100, ['children', 'conditions', 'mean'])
    """

    conditions: tuple[str, ...]
    bounds: Mapping[str, Any]
    indices: NDArray[np.intp]
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]
    impurity: float
    depth: int
    split: tuple[str, Any] | None = None
    left: RegionNode | None = field(default=None, repr=False)
    right: RegionNode | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        where = " and ".join(self.conditions) or "whole space"
        tail = f"; n={self.n_samples}, mean_confidence={self.mean_confidence:.4g})"
        head = "RegionNode("
        return f"{head}{clip_text(where, REPR_WIDTH - len(head) - len(tail))}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form of the region and, recursively, its children.

        Returns
        -------
        dict
            ``conditions``, ``n_samples``, ``mean_confidence``, ``mean`` and ``std``
            (nested lists), and ``children`` (two dicts) unless it is a leaf.
        """
        out: dict[str, Any] = {
            "conditions": list(self.conditions),
            "n_samples": self.n_samples,
            "mean_confidence": json_value(self.mean_confidence),
            "mean": json_array(self.mean),
            "std": json_array(self.std),
        }
        if not self.is_leaf:
            out["children"] = [child.to_dict() for child in self.children]
        return out

    @property
    def n_samples(self) -> int:
        """Monte Carlo samples (ICE curves) in the region."""
        return int(self.indices.size)

    @property
    def is_leaf(self) -> bool:
        return self.left is None

    @property
    def children(self) -> tuple[RegionNode, RegionNode]:
        """(left, right); a leaf has none."""
        if self.left is None or self.right is None:
            raise InvalidArgumentError("A leaf region has no children.")
        return self.left, self.right



@dataclass(frozen=True, slots=True)
class RegionTree:
    """The result of :func:`confidence_split`: a tree of regions with regional PDPs.

    Attributes
    ----------
    root : RegionNode
    pd : PartialDependenceResult
        The PDP that was split.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(200, seed=0)
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] * c["z"] for c in configs]), seed=0, n_trees=8)
    >>> pd = hp.partial_dependence(r, params="x", grid_size=5, n_samples=100, seed=0)
    >>> tree = hp.confidence_split(pd, max_splits=1)
    >>> frame = tree.to_frame()
    >>> len(frame), frame["node"].nunique()
    (15, 3)
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> tree.plot(ax=Figure().add_subplot()).get_xlabel()
    'x'
    """

    root: RegionNode
    pd: PartialDependenceResult

    def __repr__(self) -> str:
        leaves = self.leaves()
        root = self.root.mean_confidence
        best = (f", best_delta={max(1.0 - leaf.mean_confidence / root for leaf in leaves):.3f}"
                if root > 0 else "")
        head = "RegionTree(params="
        tail = (f", leaves={len(leaves)}, splits={len(leaves) - 1}, "
                f"mean_confidence={root:.4g}{best})")
        return f"{head}{clip_text(repr(self.pd.params), REPR_WIDTH - len(head) - len(tail))}{tail}"

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the global and regional PDPs; see :func:`hpinsight.plotting.plot_regions`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            ``level``, ``highlight`` and ``marks``, passed on.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_regions

        return plot_regions(self, ax=ax, **kwargs)

    def nodes(self) -> list[RegionNode]:
        """Every node, root first, each before its children, left before right."""
        out, todo = [], [self.root]
        while todo:
            node = todo.pop()
            out.append(node)
            if not node.is_leaf:
                left, right = node.children
                todo.extend([right, left])
        return out

    def to_frame(self) -> Any:
        """Long-format ``pandas.DataFrame``: one row per node and grid point.

        Returns
        -------
        pandas.DataFrame
            Columns ``node`` (number in :meth:`nodes` order; 0 is the whole space),
            ``region`` (its conditions joined by " and "), ``depth``, ``is_leaf``,
            ``n_samples``, ``mean_confidence``, ``delta`` (:meth:`delta_improvement`;
            NaN when the whole space's PDP has no uncertainty), one column per PDP
            parameter (native values), then the regional PD's ``mean`` and ``std``.
            Keep ``is_leaf`` rows for the partition of the space.
        """
        pd = import_optional("pandas", "RegionTree.to_frame")
        grid = grid_columns(self.pd.params, self.pd.grid)
        root = self.root.mean_confidence
        frames = []
        for k, node in enumerate(self.nodes()):
            size = node.mean.size
            data: dict[str, Any] = {
                "node": k,
                "region": " and ".join(node.conditions) or "whole space",
                "depth": node.depth,
                "is_leaf": node.is_leaf,
                "n_samples": node.n_samples,
                "mean_confidence": node.mean_confidence,
                "delta": 1.0 - node.mean_confidence / root if root > 0 else math.nan,
            }
            frame = pd.DataFrame({key: [value] * size for key, value in data.items()})
            for name, values in grid.items():
                frame[name] = values
            frame["mean"] = node.mean.ravel()
            frame["std"] = node.std.ravel()
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def leaves(self) -> list[RegionNode]:
        """The leaf regions, left to right; they partition the space."""
        out, todo = [], [self.root]
        while todo:
            node = todo.pop()
            if node.is_leaf:
                out.append(node)
            else:
                left, right = node.children
                todo.extend([right, left])
        return out

    def leaf_for(self, config: Mapping[str, Any]) -> RegionNode:
        """The leaf whose region holds ``config`` (native values; e.g. the incumbent).

        Parameters
        ----------
        config : mapping of str to value
            A configuration in native units. A parameter that is missing (or
            ``None``, unless ``None`` is one of its choices) is inactive. No split
            on the way to a region uses a parameter that is inactive anywhere in
            that region, so inactive parameters need no value and none is invented.

        Returns
        -------
        RegionNode
            The leaf region holding ``config``.

        Raises
        ------
        KeyError
            If a split on the way needs a parameter that ``config`` lacks: that
            parameter is active throughout the region being split, so the
            configuration is incomplete.
        InvalidDataError
            If a value that a split reads is not valid for its parameter.
        """
        space = self.pd.space
        node = self.root
        while node.split is not None:
            name, rule = node.split
            param = space[name]
            value = config.get(name, _MISSING)
            if _is_missing(param, value):
                where = " and ".join(node.conditions) or "the whole space"
                raise UnknownNameError(
                    f"RegionTree.leaf_for needs a value for {name!r}, which a split of the "
                    f"region ({where}) uses and which is active everywhere in it. Got a "
                    f"configuration with {sorted(map(str, config))}; pass every active parameter."
                )
            if isinstance(param, Categorical):
                go_left = _choice_index(param, value) in {param.index_of(c) for c in rule}
            else:
                # the value alone: encoding a partial configuration would read a
                # conditional parameter as inactive for want of its parents
                go_left = _encoded_number(param, value) <= rule
            node = node.children[0 if go_left else 1]
        return node

    def confidence_at(self, node: RegionNode, value: Any) -> float:
        """OC: the regional PD's std at the grid point closest to ``value`` (1-D PDPs)."""
        if len(self.pd.params) != 1:
            raise InvalidArgumentError("confidence_at needs a one-parameter PDP.")
        name = self.pd.params[0]
        grid = self.pd.encoded_grid[0]
        z = self.pd.space.encode([{name: value}])[0, self.pd.space.index(name)]
        return float(node.std.reshape(-1)[int(np.argmin(np.abs(grid - z)))])

    def to_search_space(self, node: RegionNode | None = None) -> SearchSpace:
        """The region as a narrowed :class:`~hpinsight.SearchSpace` (default: the root).

        Numerical parameters get the region's bounds (integer and stepped values
        rounded inwards onto the grid; a parameter left with a single value
        becomes a one-choice :class:`~hpinsight.Categorical`), categoricals keep
        the region's choices. Defaults are kept where the region holds them.

        Conditions are evaluated on the narrowed parents, in parents-first order:

        * one that no value of the narrowed parent satisfies (or whose parent was
          removed) means the child is never active there: the child is removed,
          with its conditions and, in turn, its own children;
        * one that every value satisfies is dropped when the parent is always
          active (the child is then always active too); under a conditional
          parent it becomes "parent active" (all of the parent's values);
        * otherwise it is kept, restricted to the parent's remaining values (a
          ``gt``/``lt`` condition on a parent narrowed to one value becomes a
          ``values`` condition or is resolved as above).

        Parameters
        ----------
        node : RegionNode, optional
            A node of this tree; default the root.

        Returns
        -------
        SearchSpace
            Parameters in the original column order, without those never active
            in the region.
        """
        node = self.root if node is None else node
        space = self.pd.space
        params, conditions = _narrow_space(space, node.bounds)
        children = dict.fromkeys(cond.child for cond in space.conditions)
        return SearchSpace(
            list(params.values()),
            conditions=[c for child in children for c in conditions.get(child, ())],
        )

    def delta_improvement(self, node: RegionNode) -> float:
        """δ: relative reduction of the mean confidence in ``node`` vs the whole space."""
        return 1.0 - node.mean_confidence / self.root.mean_confidence

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form of every node (conditions, size, PD mean and std, children)."""
        return {"params": list(self.pd.params), "root": self.root.to_dict()}


def confidence_split(
    pd: PartialDependenceResult,
    *,
    max_splits: int = 3,
    min_node_size: int | None = None,
    min_improvement: float = 0.0,
    exact_levels: int = 8,
) -> RegionTree:
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
    RegionTree

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
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] + c["z"] ** 2 for c in configs]), seed=0, n_trees=16)
    >>> pd = hp.partial_dependence(r, params="x", n_samples=300, seed=0)
    >>> tree = hp.confidence_split(pd, max_splits=1)
    >>> [leaf.conditions[0].split()[0] for leaf in tree.leaves()]
    ['z', 'z']
    """
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
        active = _active_everywhere(space, bounds)
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

    return RegionTree(freeze(root), pd)


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
        if best is None or gain > best[0] + 1e-12 * max(parent, 1.0):
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


def _narrowed(p: Parameter, b: Any) -> Parameter:
    """Parameter ``p`` restricted to a region's bounds ``b`` (choices, or native low/high).

    A lower bound above ``p.low`` is a split threshold and the region lies strictly
    above it; the upper bound is inclusive (the left child of a split is ``<=``).
    """
    if isinstance(p, Categorical):
        out: Parameter = Categorical(p.name, list(b))
    else:
        step = p.step or (1 if isinstance(p, Int) else None)
        low, high = max(float(b[0]), p.low), min(float(b[1]), p.high)
        empty = low > high
        if step is not None:  # inwards onto the parameter's grid
            k_low = (0 if low <= p.low
                     else step_index(p.low, step, low, "floor") + 1)  # strictly above
            k_high = step_index(p.low, step, high, "floor")
            # grid values as decode makes them: low + k * step, never above high
            low, high = min(p.low + k_low * step, p.high), min(p.low + k_high * step, p.high)
            empty = k_low > k_high
        if empty:
            raise InvalidSpaceError(
                f"The region's bounds {tuple(b)!r} hold no value of parameter {p.name!r}.",
                name=p.name,
            )
        if not low < high:
            out = Categorical(p.name, [round(low) if isinstance(p, Int) else low])
        elif isinstance(p, Int):
            out = Int(p.name, round(low), round(high), log=p.log, step=p.step)
        else:
            out = Float(p.name, low, high, log=p.log, step=p.step)
    if p.default is not None and out.contains(p.default):  # keep it, never invent one
        out = dataclasses.replace(out, default=p.default)  # type: ignore[arg-type]
    return out




def _narrow_space(
    space: SearchSpace, bounds: Mapping[str, Any]
) -> tuple[dict[str, Parameter], dict[str, list[ConditionLike]]]:
    """The parameters and conditions of ``space`` restricted to the region ``bounds``.

    Returns ``(params, conditions)``: the narrowed parameters by name in column
    order, without those never active in the region, and the conditions left per
    child (a parameter absent from ``conditions`` is active everywhere in the region).
    """
    params = {p.name: _narrowed(p, bounds[p.name]) if p.name in bounds else p
              for p in space.params}
    kept: dict[str, list[ConditionLike]] = {}
    for name in space.names_parents_first:  # parents are settled before their children
        left: list[ConditionLike] = []
        for cond in space.conditions_of(name):
            outcome = _restricted_like(cond, params, kept)
            if outcome is False:  # never active: the child goes, and its children after it
                del params[name]
                break
            if outcome is not True:
                left.append(outcome)
        else:
            if left:
                kept[name] = left
    return params, kept


def _active_everywhere(space: SearchSpace, bounds: Mapping[str, Any]) -> set[str]:
    """Names of the parameters active for every configuration of the region ``bounds``."""
    params, conditions = _narrow_space(space, bounds)
    return {name for name in params if name not in conditions}


def _restricted_like(
    cond: ConditionLike, params: Mapping[str, Parameter], kept: Mapping[str, Any]
) -> ConditionLike | bool:
    """``cond`` on the narrowed parents: ``True`` (always active), ``False`` (never) or
    an equivalent condition that is valid for the narrowed parents."""
    parts = cond.conditions if isinstance(cond, AnyOf) else (cond,)
    usable: list[Condition] = []
    for part in parts:
        parent = params.get(part.parent)
        if parent is None:  # the parent is never active in the region, so neither is this
            continue
        restricted, always = _restricted(part, parent)
        if restricted is None:
            continue
        if always and part.parent not in kept:  # the parent is active everywhere, too
            return True
        usable.append(restricted)
    if not usable:
        return False
    return usable[0] if len(usable) == 1 else AnyOf(tuple(usable))


def _restricted(cond: Condition, parent: Parameter) -> tuple[Condition | None, bool]:
    """``cond`` on its narrowed ``parent``: ``(None, False)`` if no value of the parent
    satisfies it, else ``(equivalent, always)`` with a condition valid for ``parent``
    and whether every value of the parent satisfies it."""
    if isinstance(parent, Categorical):
        if cond.values is not None:
            hit = {parent.index_of(v) for v in cond.values if parent.contains(v)}
            ok = [c for i, c in enumerate(parent.choices) if i in hit]
        else:  # a numerical parent narrowed to one value: compare that value
            ok = [c for c in parent.choices if _within(cond, float(c))]  # type: ignore[arg-type]
        if not ok:
            return None, False
        return Condition(cond.child, cond.parent, values=ok), len(ok) == len(parent.choices)
    grid = _grid_values(parent)
    if cond.values is not None:
        ok = [v for v in cond.values if parent.contains(v)]
        if not ok:
            return None, False
        always = grid is not None and np.isin(grid, np.asarray(ok, dtype=float)).all()
        return Condition(cond.child, cond.parent, values=ok), bool(always)
    if grid is not None:
        mask = _within(cond, grid)
        return (cond, bool(mask.all())) if mask.any() else (None, False)
    gt = -math.inf if cond.gt is None else float(cond.gt)
    lt = math.inf if cond.lt is None else float(cond.lt)
    if parent.high <= gt or parent.low >= lt or gt >= lt:
        return None, False
    return cond, parent.low > gt and parent.high < lt


def _within(cond: Condition, x: Any) -> Any:
    """Whether ``x`` (native number or array) satisfies the ``gt``/``lt`` of ``cond``."""
    gt = -math.inf if cond.gt is None else float(cond.gt)
    lt = math.inf if cond.lt is None else float(cond.lt)
    return (x > gt) & (x < lt)


def _grid_values(param: Float | Int) -> NDArray[np.float64] | None:
    """Every native value of an integer or stepped parameter (None: continuous, or too
    many values to list, as the measure treats them)."""
    step = param.step or (1 if isinstance(param, Int) else None)
    if step is None:
        return None
    n = step_index(param.low, step, param.high, "floor") + 1
    if n > MAX_DISCRETE_VALUES:
        return None
    return np.asarray(param.low + step * np.arange(n, dtype=np.float64))


_MISSING = object()


def _is_missing(param: Parameter, value: Any) -> bool:
    """Whether ``value`` marks ``param`` inactive (absent, or None/NaN that is no choice)."""
    if value is _MISSING:
        return True
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return not (isinstance(param, Categorical) and param.contains(value))
    return False


def _choice_index(param: Categorical, value: Any) -> int:
    try:
        return param.index_of(value)
    except KeyError:
        raise InvalidDataError(
            f"RegionTree.leaf_for got {value!r} for {param.name!r}, which is not one of its "
            f"choices {list(param.choices)!r}.",
            name=param.name,
        ) from None


def _encoded_number(param: Float | Int, value: object) -> float:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
    x = float(value) if real else math.nan  # type: ignore[arg-type]
    if not math.isfinite(x) or (param.log and x <= 0):
        raise InvalidDataError(
            f"RegionTree.leaf_for needs a finite {'positive ' if param.log else ''}number for "
            f"{param.name!r}. Got {value!r} instead.",
            name=param.name,
        )
    return encode_value(param, x)


def _ro(a: NDArray[Any]) -> NDArray[Any]:
    out = np.array(a)
    out.flags.writeable = False
    return out
