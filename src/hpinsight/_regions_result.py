"""What :func:`hpinsight.confidence_split` returns: the tree of regions (:class:`RegionsResult`)
and its nodes (:class:`RegionNode`), each a PDP with its band on a part of the space."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._optional import import_optional
from ._pdp import PDBand
from ._shared import REPR_WIDTH, clip_text, grid_columns, json_array, json_value
from .exceptions import InvalidArgumentError, InvalidDataError, UnknownNameError
from .space import Categorical, Float, Int, SearchSpace, encode_value, narrow_space

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._pdp import PartialDependenceResult
    from .space import Parameter

__all__ = ["RegionNode", "RegionsResult"]


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class RegionNode(PDBand):
    """One region of the tree: a box over the non-PDP parameters and its regional PDP.

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it knows neither its grid nor its parameters: its
    rows are those of :meth:`RegionsResult.to_frame` with its ``node`` number, and its
    curve is drawn by :meth:`RegionsResult.plot` (``highlight=node`` emphasizes it).

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
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] * c["z"] for c in configs]), seed=0)
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



@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class RegionsResult:
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
    >>> r = hp.fanova(hp.TrialHistory(space, configs, [c["x"] * c["z"] for c in configs]), seed=0)
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
        head = "RegionsResult(params="
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
        pd = import_optional("pandas", "RegionsResult.to_frame")
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
            value = config.get(name, MISSING)
            if _is_missing(param, value):
                where = " and ".join(node.conditions) or "the whole space"
                raise UnknownNameError(
                    f"RegionsResult.leaf_for needs a value for {name!r}, which a split of the "
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
        param = self.pd.space[name]
        # the value alone, as leaf_for reads it: a whole configuration of one conditional
        # parameter encodes it as inactive (NaN), and every value read the first grid point
        z = float(param.index_of(value)) if isinstance(param, Categorical) \
            else _encoded_number(param, value)
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
        params, conditions = narrow_space(space, node.bounds)
        children = dict.fromkeys(cond.child for cond in space.conditions)
        return SearchSpace(
            list(params.values()),
            conditions=[c for child in children for c in conditions.get(child, ())],
        )

    def delta_improvement(self, node: RegionNode) -> float:
        """δ: relative reduction of the mean confidence in ``node`` vs the whole space
        (NaN where the whole space's band is 0, as in :meth:`to_frame`)."""
        root = self.root.mean_confidence  # 0 where the band is nothing (a constant objective)
        return 1.0 - node.mean_confidence / root if root > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form of every node (conditions, size, PD mean and std, children)."""
        return {"params": list(self.pd.params), "root": self.root.to_dict()}


MISSING = object()


def _is_missing(param: Parameter, value: Any) -> bool:
    """Whether ``value`` marks ``param`` inactive (absent, or None/NaN that is no choice)."""
    if value is MISSING:
        return True
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return not (isinstance(param, Categorical) and param.contains(value))
    return False


def _choice_index(param: Categorical, value: Any) -> int:
    try:
        return param.index_of(value)
    except KeyError:
        raise InvalidDataError(
            f"RegionsResult.leaf_for got {value!r} for {param.name!r}, which is not one of its "
            f"choices {list(param.choices)!r}.",
            name=param.name,
        ) from None


def _encoded_number(param: Float | Int, value: object) -> float:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
    x = float(value) if real else math.nan  # type: ignore[arg-type]
    if not math.isfinite(x) or (param.log and x <= 0):
        raise InvalidDataError(
            f"RegionsResult.leaf_for needs a finite {'positive ' if param.log else ''}number for "
            f"{param.name!r}. Got {value!r} instead.",
            name=param.name,
        )
    return encode_value(param, x)
