"""Matplotlib rendering of partial dependence plots and confidence-split regions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import InvalidArgumentError
from ._common import MARK_STYLES, OTHER_MARK, new_axes, style_axes_2d
from ._data import PD2PlotData, PDPlotData, pd2_plot_data, pd_plot_data, region_plot_data

if TYPE_CHECKING:
    from .._pdp import PartialDependenceResult
    from .._regions import RegionNode, RegionTree

__all__ = ["plot_partial_dependence", "plot_regions"]



def plot_partial_dependence(
    result: PartialDependenceResult,
    *,
    ax: Any = None,
    level: float = 0.95,
    ice: int = 0,
    marks: dict[str, Any] | None = None,
    seed: int | None = 0,
) -> Any:
    """Draw a PDP with its confidence band (Moosbauer et al. 2021, Fig. 3).

    Parameters
    ----------
    result : PartialDependenceResult
        One parameter: the PD line with a shaded band (error bars for categoricals),
        on a log axis for log parameters. Two parameters: a heatmap of the PD with
        contour lines of its standard deviation.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    level : float, default=0.95
        Coverage of the band.
    ice : int, default=0
        Also draw this many ICE curves (randomly chosen, thin) behind the PD
        (one-parameter PDPs).
    marks : dict of str to value, optional
        Vertical lines at native values, e.g. ``{"incumbent": study.best_params["lr"]}``.
    seed : int, optional
        Which ICE curves are drawn.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("x", 0, 1)])
    >>> configs = space.sample(100, seed=0)
    >>> result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] + c["lr"] for c in configs]), seed=0)
    >>> pd = hp.partial_dependence(result, params="lr", n_samples=100, seed=0)
    >>> ax = hp.plotting.plot_partial_dependence(pd, ice=10)
    >>> ax.get_xscale()
    'log'
    """
    ax = new_axes(ax, "plot_partial_dependence", (5.5, 3.6))
    if len(result.params) == 2:
        if ice or marks:
            raise InvalidArgumentError("plot_partial_dependence draws ICE curves and marks for "
                             "one-parameter PDPs only; a two-parameter PDP is a heatmap of "
                             "the PD with contours of its std. Leave out 'ice' and 'marks'.")
        _draw_2d(ax, pd2_plot_data(result))
        return ax
    data = pd_plot_data(result, level=level, ice=ice, seed=seed, marks=marks)
    _draw_1d(ax, data)
    ax.set_title(f"Partial dependence of {data.param}")
    return ax


def plot_regions(
    tree: RegionTree,
    *,
    ax: Any = None,
    level: float = 0.95,
    highlight: RegionNode | dict[str, Any] | None = None,
    marks: dict[str, Any] | None = None,
) -> Any:
    """Draw a confidence-split PDP: the global band and each leaf region's PD and band.

    Parameters
    ----------
    tree : RegionTree
        From :func:`~hpinsight.confidence_split` of a one-parameter PDP.
    ax : matplotlib Axes, optional
    level : float, default=0.95
    highlight : RegionNode or configuration, optional
        The region to emphasize, or a configuration (e.g. the incumbent's parameters)
        whose region is emphasized and whose value is marked. A configuration without
        a value for a parameter the splits use (inactive in it) has no region to
        emphasize; its value is still marked.
    marks : dict of str to value, optional
        Vertical lines at native values.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Categorical("k", ["a", "b"])])
    >>> configs = space.sample(200, seed=0)
    >>> y = [c["x"] * (3 if c["k"] == "b" else -1) for c in configs]
    >>> result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    >>> tree = hp.confidence_split(hp.partial_dependence(result, params="x", seed=0))
    >>> ax = hp.plotting.plot_regions(tree, highlight={"x": 0.2, "k": "b"})
    >>> len(ax.get_lines()) >= 3
    True
    """
    ax = new_axes(ax, "plot_regions", (6.5, 3.8))
    marks = dict(marks or {})
    node = highlight
    if isinstance(highlight, dict):
        try:
            node = tree.leaf_for(highlight)
        except KeyError:  # a split uses a parameter inactive in this configuration
            node = None
        name = tree.pd.params[0]
        if name in highlight:
            marks.setdefault("incumbent", highlight[name])
    data = region_plot_data(tree, level=level, highlight=node,  # type: ignore[arg-type]
                            marks=marks)
    _draw_1d(ax, data)
    ax.set_title(f"Partial dependence of {data.param} by confidence region")
    return ax


def _draw_1d(ax: Any, data: PDPlotData) -> None:
    categorical = data.tick_labels is not None
    any_highlight = any(c.highlight for c in data.curves)
    for row in data.ice:
        ax.plot(data.x, row, color="0.75", linewidth=0.6, zorder=1)
    colors = iter(["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown",
                   "tab:pink", "tab:olive", "tab:cyan"])
    for i, curve in enumerate(data.curves):
        color = "black" if i == 0 and len(data.curves) > 1 else next(colors)
        width = 2.6 if curve.highlight else (1.2 if i == 0 and len(data.curves) > 1 else 1.8)
        label = curve.label + ("  ← incumbent's region" if curve.highlight else "")
        if categorical:
            offset = 0.0 if len(data.curves) == 1 else (i - (len(data.curves) - 1) / 2) * 0.12
            ax.errorbar(data.x + offset, curve.mean,
                        yerr=[curve.mean - curve.lower, curve.upper - curve.mean],
                        fmt="o", color=color, capsize=3, linewidth=width, label=label, zorder=3)
        else:
            ax.plot(data.x, curve.mean, color=color, linewidth=width, label=label, zorder=3)
            if len(data.curves) == 1 or curve.highlight or (i == 0 and not any_highlight):
                # regions: shade the whole space's band, or the emphasized region's only
                ax.fill_between(data.x, curve.lower, curve.upper, color=color,
                                alpha=0.25 if curve.highlight or len(data.curves) == 1
                                else 0.12, linewidth=0, zorder=2)
            elif not any_highlight:
                ax.plot(data.x, curve.lower, color=color, linewidth=0.7, linestyle=":")
                ax.plot(data.x, curve.upper, color=color, linewidth=0.7, linestyle=":")
    for label, pos in data.marks.items():
        color, style = MARK_STYLES.get(label, OTHER_MARK)
        ax.axvline(pos, color=color, linestyle=style, linewidth=1.2, label=label, zorder=4)
    if data.log:
        ax.set_xscale("log")
    if categorical:
        ax.set_xticks(data.x)
        ax.set_xticklabels(list(data.tick_labels or ()))
    ax.set_xlabel(data.param)
    ax.set_ylabel(data.ylabel)
    if len(data.curves) > 1:  # region labels are long: beside the axes
        ax.legend(fontsize="small", title=f"{data.level:.0%} band", title_fontsize="small",
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize="small", title=f"{data.level:.0%} band", title_fontsize="small")


def _draw_2d(ax: Any, data: PD2PlotData) -> None:
    mesh = ax.pcolormesh(data.x, data.y, data.mean, shading="nearest", cmap="viridis")
    ax.figure.colorbar(mesh, ax=ax, label="partial dependence")
    if np.ptp(data.std) > 0:
        lines = ax.contour(data.x, data.y, data.std, colors="white", linewidths=0.8)
        ax.clabel(lines, fontsize="x-small", fmt="sd %.2g")
    style_axes_2d(ax, data.x, data.y, data.tick_labels, data.log)
    ax.set_xlabel(data.params[0])
    ax.set_ylabel(data.params[1])
    ax.set_title(f"Partial dependence of {data.params[0]} and {data.params[1]}")
