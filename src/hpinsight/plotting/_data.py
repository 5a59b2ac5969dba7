"""Plot data: what a figure shows, computed from results without any drawing library.

Each function turns a result into frozen, backend-neutral arrays (x positions, curves,
bands, labels), so the numbers a figure shows are tested directly and a second
backend could render the same data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import InvalidArgumentError
from ..space import Categorical, Float, Int
from ._common import axis_of

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._pdp import PartialDependenceResult
    from .._regions_result import RegionNode, RegionsResult
    from ..space import SearchSpace

__all__ = ["CurveData", "PD2PlotData", "PDPlotData", "pd2_plot_data", "pd_plot_data",
           "region_plot_data", "region_rules"]

#: Choices a region's label lists before it only counts them.
LISTED_CHOICES = 3


@dataclass(frozen=True, slots=True)
class CurveData:
    """One PD curve with its band: a global PDP or one region's.

    Attributes
    ----------
    label : str
    mean, lower, upper : ndarray of shape (G,)
    n_samples : int
        ICE curves behind the estimate.
    highlight : bool
        Drawn emphasized (e.g. the incumbent's region).
    """

    label: str
    mean: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    n_samples: int
    highlight: bool = False


@dataclass(frozen=True, slots=True)
class PDPlotData:
    """Everything a one-parameter PD figure draws.

    Attributes
    ----------
    param : str
    x : ndarray of shape (G,)
        Positions: native values for numerical parameters, ``0..G-1`` for categoricals.
    tick_labels : tuple of str or None
        Category names (categoricals only).
    log : bool
        Log axis (log parameters).
    curves : tuple of CurveData
    ice : ndarray of shape (k, G)
        A few ICE curves drawn thinly behind the PD (may be empty).
    marks : dict of str to float
        Vertical marks (e.g. ``{"incumbent": 0.01}``) at positions on ``x``'s scale.
    level : float
        Coverage of the bands.
    ylabel : str
    """

    param: str
    x: NDArray[np.float64]
    tick_labels: tuple[str, ...] | None
    log: bool
    curves: tuple[CurveData, ...]
    ice: NDArray[np.float64]
    marks: dict[str, float]
    level: float
    ylabel: str


def pd_plot_data(
    result: PartialDependenceResult,
    *,
    level: float = 0.95,
    ice: int = 0,
    seed: int | None = 0,
    marks: dict[str, Any] | None = None,
) -> PDPlotData:
    """Plot data of a one-parameter PDP with its band.

    Parameters
    ----------
    result : PartialDependenceResult
        A one-parameter PDP.
    level : float, default=0.95
        Coverage of the band.
    ice : int, default=0
        How many ICE curves to include, chosen at random with ``seed``.
    seed : int, optional
    marks : dict of str to value, optional
        Native values to mark (an unknown categorical choice is left out).

    Returns
    -------
    PDPlotData
    """
    if len(result.params) != 1:
        raise InvalidArgumentError(
            f"pd_plot_data draws one-parameter PDPs; this one has {result.params!r}. "
            "Use pd2_plot_data for two.")
    lower, upper = result.confidence_band(level)
    curve = CurveData(label="all of the space", mean=result.mean, lower=lower, upper=upper,
                      n_samples=result.n_samples)
    return _assemble(result, (curve,), level=level, ice=ice, seed=seed, marks=marks)


def region_plot_data(
    tree: RegionsResult,
    *,
    level: float = 0.95,
    highlight: RegionNode | None = None,
    marks: dict[str, Any] | None = None,
) -> PDPlotData:
    """Plot data of a confidence-split PDP: the global curve and one curve per leaf region.

    Parameters
    ----------
    tree : RegionsResult
        From a one-parameter PDP.
    level : float, default=0.95
        Coverage of every band.
    highlight : RegionNode, optional
        The leaf to emphasize.
    marks : dict of str to value, optional

    Returns
    -------
    PDPlotData
        The whole space's curve first, then the leaves left to right, each labelled by
        :func:`region_rules` and its share of the PDP's Monte Carlo samples (e.g.
        ``"optimizer = adam and lr > 0.0142 (160 of 500 samples)"``).
    """
    pd = tree.pd
    if len(pd.params) != 1:
        raise InvalidArgumentError("region_plot_data draws one-parameter PDPs.")
    lower, upper = pd.confidence_band(level)
    curves = [CurveData(label="all of the space", mean=pd.mean, lower=lower, upper=upper,
                        n_samples=pd.n_samples)]
    for leaf in tree.leaves():
        where = " and ".join(region_rules(pd.space, leaf)) or "all of the space"
        low, high = leaf.confidence_band(level)
        curves.append(CurveData(
            label=f"{where} ({leaf.n_samples} of {pd.n_samples} samples)", mean=leaf.mean,
            lower=low, upper=high, n_samples=leaf.n_samples, highlight=leaf is highlight,
        ))
    return _assemble(pd, tuple(curves), level=level, ice=0, seed=None, marks=marks)


def region_rules(space: SearchSpace | None, node: RegionNode) -> tuple[str, ...]:
    """A region's conditions, one rule per parameter, short enough for a legend.

    The splits on the path to ``node`` are intersected: ranges of a numerical parameter
    become one interval (``"lr > 0.037"``, ``"0.0142 < lr <= 0.207"``; integers as
    integers) and sets of choices their intersection (``"optimizer = adam"``,
    ``"optimizer in {adam, sgd}"``, ``"arch not in {a, b}"``, or, for a long set,
    how many: ``"arch in 109 of 200 choices"``).

    Parameters
    ----------
    space : SearchSpace or None
        The PDP's search space (None: the conditions as the tree wrote them).
    node : RegionNode

    Returns
    -------
    tuple of str
        In the order the parameters were first split on.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(300, seed=0)
    >>> y = [c["x"] * (c["z"] > 0.5) for c in configs]
    >>> r = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    >>> pd = hp.partial_dependence(r, params="x", grid_size=5, n_samples=200, seed=0)
    >>> tree = hp.confidence_split(pd, max_splits=3, min_improvement=0.0)
    >>> leaf = tree.leaves()[1]
    >>> leaf.conditions, region_rules(space, leaf)
    (('z <= 0.5842', 'z > 0.4927'), ('0.493 < z <= 0.584',))
    """
    if space is None:
        return tuple(node.conditions)
    rules = []
    for name, bound in node.bounds.items():
        if name not in space.names:
            return tuple(node.conditions)
        param = space[name]
        if isinstance(param, Categorical):
            rule = _choices_rule(name, tuple(bound), param)
        else:
            rule = _range_rule(name, float(bound[0]), float(bound[1]), param)
        if rule:
            rules.append(rule)
    return tuple(rules)


def _choices_rule(name: str, chosen: Sequence[Any], param: Categorical) -> str:
    def listed(values: Sequence[Any]) -> str:
        return "{" + ", ".join(_short(v) for v in values) + "}"

    choices = param.choices
    if len(chosen) == len(choices):
        return ""
    if len(chosen) == 1:
        return f"{name} = {_short(chosen[0])}"
    if len(chosen) <= LISTED_CHOICES:
        return f"{name} in {listed(chosen)}"
    # by position: True == 1 and False == 0, which a categorical keeps apart
    taken = {param.index_of(c) for c in chosen}
    left_out = [c for i, c in enumerate(choices) if i not in taken]
    if len(left_out) == 1:
        return f"{name} != {_short(left_out[0])}"
    if len(left_out) <= LISTED_CHOICES - 1:
        return f"{name} not in {listed(left_out)}"
    return f"{name} in {len(chosen)} of {len(choices)} choices"


def _range_rule(name: str, low: float, high: float, param: Float | Int) -> str:
    # bounds: above ``low`` (strictly) when it is a split, up to ``high`` (inclusive)
    has_low, has_high = low > param.low, high < param.high
    if isinstance(param, Int):  # whole numbers: x > 45.3 is x > 45, x <= 45.3 is x <= 45
        lo, hi = str(math.floor(low)), str(math.floor(high))
    else:
        lo, hi = f"{low:.3g}", f"{high:.3g}"
        if lo == hi:  # close splits: the digits that tell them apart
            lo, hi = f"{low:.6g}", f"{high:.6g}"
    if has_low and has_high:
        return f"{lo} < {name} <= {hi}"
    if has_low:
        return f"{name} > {lo}"
    if has_high:
        return f"{name} <= {hi}"
    return ""


def _short(value: Any, width: int = 14) -> str:
    text = str(value)
    if len(text) <= width:
        return text
    head = (width - 1) // 2  # cut in the middle: choices often share a prefix
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _assemble(
    result: PartialDependenceResult,
    curves: tuple[CurveData, ...],
    *,
    level: float,
    ice: int,
    seed: int | None,
    marks: dict[str, Any] | None,
) -> PDPlotData:
    name = result.params[0]
    param = result.space[name]
    grid = result.grid[0]
    x, ticks, log = axis_of(param, grid)
    k = min(int(ice), result.n_samples)
    rows = np.random.default_rng(seed).choice(result.n_samples, size=k, replace=False) \
        if k else np.zeros(0, dtype=np.intp)
    ice_curves = result.ice_mean[np.sort(rows)] if k else np.zeros((0, x.size))
    positions: dict[str, float] = {}
    for label, value in (marks or {}).items():
        if isinstance(param, Categorical):
            # by position, not by ==: True and 1 are two choices, and None is one
            at = _grid_position(param, list(grid), value)
            if at is not None:
                positions[label] = float(at)
        elif value is not None:
            positions[label] = float(value)
    return PDPlotData(param=name, x=x, tick_labels=ticks, log=log, curves=curves,
                      ice=ice_curves, marks=positions, level=float(level),
                      ylabel=f"partial dependence ({_model_name(result.model_kind)})")


def _grid_position(param: Categorical, grid: list[Any], value: Any) -> int | None:
    """Where choice ``value`` of ``param`` stands on a PDP's ``grid`` (None: it is not a
    choice, or not on the grid)."""
    try:
        wanted = param.index_of(value)
    except (KeyError, ValueError):
        return None
    for at, choice in enumerate(grid):
        if param.index_of(choice) == wanted:
            return at
    return None


def _model_name(kind: str) -> str:
    """Short enough for a vertical axis label of a short figure."""
    return "GP" if kind.startswith("gaussian process") else _short(kind, 16)


@dataclass(frozen=True, slots=True)
class PD2PlotData:
    """Everything a two-parameter PD heatmap draws: the mean, and its std as contours.

    Attributes
    ----------
    params : tuple of str
    x, y : ndarray
        Axis positions (native values, or ``0..G-1`` for categoricals).
    tick_labels : tuple of (tuple of str or None)
    log : tuple of bool
    mean, std : ndarray of shape (len(y), len(x))
        Rows follow ``y``, columns ``x`` (image layout).
    """

    params: tuple[str, str]
    x: NDArray[np.float64]
    y: NDArray[np.float64]
    tick_labels: tuple[tuple[str, ...] | None, tuple[str, ...] | None]
    log: tuple[bool, bool]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]


def pd2_plot_data(result: PartialDependenceResult) -> PD2PlotData:
    """Plot data of a two-parameter PDP.

    Parameters
    ----------
    result : PartialDependenceResult
        A two-parameter PDP; the first parameter goes on the x axis.

    Returns
    -------
    PD2PlotData
    """
    if len(result.params) != 2:
        raise InvalidArgumentError(f"pd2_plot_data draws two-parameter PDPs; got {result.params!r}.")
    (x, tx, lx), (y, ty, ly) = (axis_of(result.space[name], grid)
                                for name, grid in zip(result.params, result.grid, strict=True))
    return PD2PlotData(params=(result.params[0], result.params[1]), x=x, y=y,
                       tick_labels=(tx, ty), log=(lx, ly), mean=result.mean.T,
                       std=result.std.T)
