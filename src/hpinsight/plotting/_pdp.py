"""Matplotlib rendering of partial dependence plots and confidence-split regions."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import InvalidArgumentError
from ._common import (
    MANY_CHOICES,
    MARK_STYLES,
    OTHER_MARK,
    bounded_text,
    category_label,
    category_order,
    check_result,
    legend_above,
    legend_entries,
    n_choices,
    new_axes,
    set_category_ticks,
    set_log_axis,
    set_title,
    set_xlabel,
    style_axes_2d,
)
from ._data import PD2PlotData, PDPlotData, pd2_plot_data, pd_plot_data, region_plot_data

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._pdp import PartialDependenceResult
    from .._regions_result import RegionNode, RegionsResult

__all__ = ["plot_partial_dependence", "plot_regions"]



@bounded_text
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
        One parameter: the PD line with a shaded band (error bars for categoricals;
        more than 20 choices are sorted by their PD and only as many named as fit),
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
    check_result(result, ("PartialDependenceResult",), "plot_partial_dependence")
    ax = new_axes(ax, "plot_partial_dependence", (5.5, 3.6))
    if len(result.params) == 2:
        if ice or marks:
            raise InvalidArgumentError("plot_partial_dependence draws ICE curves and marks for "
                             "one-parameter PDPs only; a two-parameter PDP is a heatmap of "
                             "the PD with contours of its std. Leave out 'ice' and 'marks'.")
        _draw_2d(ax, pd2_plot_data(result), (n_choices(result.space, result.params[0]), n_choices(result.space, result.params[1])))
        return ax
    data = pd_plot_data(result, level=level, ice=ice, seed=seed, marks=marks)
    _draw_1d(ax, data, f"Partial dependence of {data.param}", n_choices(result.space, result.params[0]))
    return ax


@bounded_text
def plot_regions(
    tree: RegionsResult,
    *,
    ax: Any = None,
    level: float = 0.95,
    highlight: RegionNode | dict[str, Any] | None = None,
    marks: dict[str, Any] | None = None,
) -> Any:
    """Draw a confidence-split PDP: the global band and each leaf region's PD and band.

    Parameters
    ----------
    tree : RegionsResult
        From :func:`~hpinsight.confidence_split` of a one-parameter PDP. Each region is
        labelled with one rule per parameter (its splits intersected, see
        :func:`~hpinsight.plotting.region_plot_data`) and its share of the PDP's Monte
        Carlo samples, in a legend beside the axes.
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
    check_result(tree, ("RegionsResult",), "plot_regions", "tree")
    ax = new_axes(ax, "plot_regions", (8.5, 3.6))
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
    _draw_1d(ax, data, f"Partial dependence of {data.param} by confidence region",
             n_choices(tree.pd.space, tree.pd.params[0]))
    return ax


def _draw_1d(ax: Any, data: PDPlotData, title: str, n_choices: int | None = None) -> None:
    """One-parameter PD curves (and regions' curves) with their bands, marks and legend.

    ``n_choices``: the categorical parameter's number of choices, when its grid holds
    only some of them (said in the x label).
    """
    categorical = data.tick_labels is not None
    regions = len(data.curves) > 1
    any_highlight = any(c.highlight for c in data.curves)
    x = data.x
    order = np.arange(x.size)
    if categorical:  # many choices: drawn sorted by the (first) curve
        order = category_order(data.curves[0].mean)
        x = np.empty(x.size)
        x[order] = np.arange(x.size, dtype=np.float64)
    many = categorical and x.size > MANY_CHOICES
    ice_order = np.argsort(x, kind="stable")  # left to right (sorted choices too)
    for row in data.ice:
        ax.plot(x[ice_order], row[ice_order], color="0.75", linewidth=0.6, zorder=1)
    colors = itertools.cycle(["tab:blue", "tab:orange", "tab:green", "tab:purple",
                              "tab:brown", "tab:pink", "tab:olive", "tab:cyan"])
    wrap = 30 if _axes_inches(ax) >= 5.5 else 22
    for i, curve in enumerate(data.curves):
        color = "black" if i == 0 and regions else next(colors)
        width = 2.6 if curve.highlight else (1.2 if i == 0 and regions else 1.8)
        label = _legend_label(curve.label, curve.highlight, wrap) if regions else curve.label
        if categorical:
            offset = 0.0 if not regions else (i - (len(data.curves) - 1) / 2) * 0.12
            ax.errorbar(x + offset, curve.mean,
                        yerr=[curve.mean - curve.lower, curve.upper - curve.mean],
                        fmt="o", color=color, capsize=0 if many else 3,
                        markersize=2.5 if many else 6.0,
                        linewidth=min(width, 1.0) if many else width, label=label, zorder=3)
        else:
            ax.plot(x, curve.mean, color=color, linewidth=width, label=label, zorder=3)
            if not regions or curve.highlight or (i == 0 and not any_highlight):
                # regions: shade the whole space's band, or the emphasized region's only
                ax.fill_between(x, curve.lower, curve.upper, color=color,
                                alpha=0.25 if curve.highlight or not regions else 0.12,
                                linewidth=0, zorder=2)
            elif not any_highlight:
                ax.plot(x, curve.lower, color=color, linewidth=0.7, linestyle=":")
                ax.plot(x, curve.upper, color=color, linewidth=0.7, linestyle=":")
    for label, pos in data.marks.items():
        color, style = MARK_STYLES.get(label, OTHER_MARK)
        where = x[round(pos)] if categorical else pos
        ax.axvline(where, color=color, linestyle=style, linewidth=1.2, label=label, zorder=4)
    if data.log:
        set_log_axis(ax, "x", data.x)
    label = data.param
    if categorical:
        ax.set_xlim(-0.5, x.size - 0.5)
        named = set_category_ticks(ax, "x", [(data.tick_labels or ())[j] for j in order])
        label = category_label(data.param, x.size, n_choices, named,
                               "partial dependence" if many else None)
    set_xlabel(ax, label)
    ax.set_ylabel(data.ylabel)
    band = f"{data.level:.0%} band"
    if regions:  # region labels are long: beside the axes, wrapped, the axes keep the width
        set_title(ax, title)
        ax.legend(*legend_entries(ax), fontsize="small", title=band, title_fontsize="small",
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  handlelength=1.5, labelspacing=0.6)
    else:
        legend_above(ax, title, legend_title=band)


def _axes_inches(ax: Any) -> float:
    """The axes' width in inches before any layout."""
    return float(ax.get_position().width * ax.get_figure().get_figwidth())


def _legend_label(label: str, highlight: bool, width: int) -> str:
    """A region's legend entry on lines of about ``width`` characters: its rules (broken
    between rules only), its share of samples, and whether it is the incumbent's."""
    head, sep, count = label.rpartition(" (")
    if not sep or not count.endswith("samples)"):
        head, count = label, ""
    lines: list[str] = []
    current = ""
    for rule in head.split(" and "):
        joined = f"{current} and {rule}" if current else rule
        if current and len(joined) > width:
            lines.append(current + " and")
            current = rule
        else:
            current = joined
    if count:
        if len(current) + len(count) + 2 <= width:
            current = f"{current} ({count}"
        else:
            lines.append(current)
            current = f"({count}"
    lines.append(current)
    if highlight:
        lines.append("← incumbent's region")
    return "\n".join(lines)


def cell_edges(centers: NDArray[np.float64], log: bool) -> NDArray[np.float64]:
    """The edges of cells centred on sorted ``centers``: midway between neighbours, and
    half a step beyond the ends, in logarithms where ``log``.

    Examples
    --------
    >>> [f"{e:.3g}" for e in cell_edges(np.array([1e-3, 1e-2, 1e-1]), log=True)]
    ['0.000316', '0.00316', '0.0316', '0.316']
    """
    v = np.asarray(centers, dtype=np.float64)
    if log:
        v = np.log(v)
    if v.size == 1:
        edges = v + np.array([-0.5, 0.5])
    else:
        mid = (v[:-1] + v[1:]) / 2
        edges = np.concatenate(([2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]))
    out: NDArray[np.float64] = np.exp(edges) if log else edges
    return out


def _draw_2d(ax: Any, data: PD2PlotData, totals: tuple[int | None, int | None]) -> None:
    # each cell centred on its grid point in the axis's own scale (on a log axis, edges
    # at the geometric midpoints: matplotlib's "nearest" put them at the arithmetic ones)
    mesh = ax.pcolormesh(cell_edges(data.x, data.log[0]), cell_edges(data.y, data.log[1]),
                         data.mean, shading="flat", cmap="viridis", rasterized=True)
    ax.figure.colorbar(mesh, ax=ax, label="partial dependence")
    if np.ptp(data.std) > 0:
        lines = ax.contour(data.x, data.y, data.std, colors="white", linewidths=0.8)
        ax.clabel(lines, fontsize="x-small", fmt="sd %.2g")
    style_axes_2d(ax, data.x, data.y, data.tick_labels, data.log, data.params, totals)
    set_title(ax, f"Partial dependence of {data.params[0]} and {data.params[1]}")
