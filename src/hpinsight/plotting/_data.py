"""Plot data: what a figure shows, computed from results without any drawing library.

Each function turns a result into frozen, backend-neutral arrays (x positions, curves,
bands, labels), so the numbers a figure shows are tested directly and a second
backend could render the same data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._params import Categorical
from ..exceptions import InvalidArgumentError
from ._common import axis_of

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._pdp import PartialDependenceResult
    from .._regions import RegionNode, RegionTree

__all__ = ["CurveData", "PD2PlotData", "PDPlotData", "pd2_plot_data", "pd_plot_data",
           "region_plot_data"]


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
    tree: RegionTree,
    *,
    level: float = 0.95,
    highlight: RegionNode | None = None,
    marks: dict[str, Any] | None = None,
) -> PDPlotData:
    """Plot data of a confidence-split PDP: the global curve and one curve per leaf region.

    Parameters
    ----------
    tree : RegionTree
        From a one-parameter PDP.
    level : float, default=0.95
        Coverage of every band.
    highlight : RegionNode, optional
        The leaf to emphasize.
    marks : dict of str to value, optional

    Returns
    -------
    PDPlotData
        The whole space's curve first, then the leaves left to right.
    """
    pd = tree.pd
    if len(pd.params) != 1:
        raise InvalidArgumentError("region_plot_data draws one-parameter PDPs.")
    lower, upper = pd.confidence_band(level)
    curves = [CurveData(label="all of the space", mean=pd.mean, lower=lower, upper=upper,
                        n_samples=pd.n_samples)]
    for leaf in tree.leaves():
        where = " and ".join(leaf.conditions) or "all of the space"
        low, high = leaf.confidence_band(level)
        curves.append(CurveData(
            label=f"{where} (n={leaf.n_samples})", mean=leaf.mean, lower=low, upper=high,
            n_samples=leaf.n_samples, highlight=leaf is highlight,
        ))
    return _assemble(pd, tuple(curves), level=level, ice=0, seed=None, marks=marks)


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
        if value is None:
            continue
        if isinstance(param, Categorical):
            if value in grid:
                positions[label] = float(list(grid).index(value))
        else:
            positions[label] = float(value)
    return PDPlotData(param=name, x=x, tick_labels=ticks, log=log, curves=curves,
                      ice=ice_curves, marks=positions, level=float(level),
                      ylabel=f"partial dependence ({result.surrogate})")


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
