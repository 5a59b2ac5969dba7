"""Matplotlib rendering of importances, marginals, interactions, trajectories, risk and
subspace suggestions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..space import Categorical
from ._common import (
    MANY_CHOICES,
    MARK_STYLES,
    MAX_BAR_LABEL_CHARS,
    MAX_TICK_CHARS,
    OTHER_MARK,
    axis_of,
    bounded,
    bounded_text,
    category_label,
    category_order,
    check_result,
    legend_above,
    n_choices,
    new_axes,
    set_category_ticks,
    set_log_axis,
    set_title,
    set_xlabel,
    style_axes_2d,
)
from ._importance_data import (
    importance_plot_data,
    marginal_of,
    marginal_plot_data,
    risk_plot_data,
    subspace_plot_data,
    trajectory_plot_data,
)

if TYPE_CHECKING:
    from .._fanova_result import FanovaResult, MarginalResult
    from .._risk import TuningRiskResult
    from .._subspace import SubspaceResult

__all__ = [
    "plot_importance",
    "plot_importance_history",
    "plot_interaction",
    "plot_marginal",
    "plot_subspace",
    "plot_tuning_risk",
]



@bounded_text
def plot_importance(
    result: FanovaResult, *, ax: Any = None, top: int = 10, capped: FanovaResult | None = None
) -> Any:
    """Horizontal bars of the fractions of variance, with std-over-trees whiskers.

    Parameters
    ----------
    result : FanovaResult
        Main effects and, when computed (``max_order=2``), interactions.
    ax : matplotlib Axes, optional
    top : int, default=10
        Effects shown, most important on top; the title says so when there are more
        (``"Importance: top 8 of 21 effects"``).
    capped : FanovaResult, optional
        A capped analysis (e.g. ``fanova(..., cap_quantile=0.25)``), drawn beside each bar;
        where more than a quarter of its refits find no signal, a line in the corner says
        so instead.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(100, seed=0)
    >>> result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0)
    >>> [t.get_text() for t in hp.plotting.plot_importance(result).get_yticklabels()]
    ['x', 'z']
    """
    check_result(result, ("FanovaResult",), "plot_importance")
    data = importance_plot_data(result, top=top, capped=capped)
    ax = new_axes(ax, "plot_importance", (6.0, 0.45 * len(data.labels) + 1.2))
    y = np.arange(len(data.labels), dtype=np.float64)
    height = 0.38 if data.capped_mean is not None else 0.7
    ax.barh(y, data.mean, height=height, xerr=data.std, color="tab:blue", capsize=3,
            label="all trials")
    if data.capped_mean is not None:
        ax.barh(y + height, data.capped_mean, height=height, xerr=data.capped_std,
                color="tab:orange", capsize=3, label=data.capped_label)
        ax.legend(fontsize="small", loc="lower right")
    if data.note:  # a capped analysis without signal: said, not drawn
        ax.text(0.99, 0.02, data.note, transform=ax.transAxes, ha="right", va="bottom",
                fontsize="small", color="dimgray")
    ax.set_yticks(y + (height / 2 if data.capped_mean is not None else 0.0))
    ax.set_yticklabels([bounded(label, MAX_BAR_LABEL_CHARS) for label in data.labels])
    ax.invert_yaxis()
    ax.set_xlim(left=0.0)
    spread = "trees" if result.surrogate.kind != "gp" else (
        "draws" if not result.n_refits else "draws and refits")
    # on two lines beside long names, which leave the bars less than its width
    wide = max((len(label) for label in data.labels), default=0) > MAX_TICK_CHARS
    ax.set_xlabel(f"fraction of variance{chr(10) if wide else ' '}(mean ± std over {spread})")
    shown = len(data.labels)
    set_title(ax, "Importance" if shown >= data.n_effects
              else f"Importance: top {shown} of {data.n_effects} effects")
    return ax


@bounded_text
def plot_marginal(
    result: FanovaResult | MarginalResult, name: str | None = None, *, ax: Any = None,
    marks: Mapping[str, Any] | None = None, grid_size: int = 100,
) -> Any:
    """The exact marginal of one parameter with a ±1 std band (Hutter et al. 2014, Fig. 1).

    Parameters
    ----------
    result : FanovaResult or MarginalResult
        An analysis (then ``name`` is required), or a one-parameter marginal
        (``result.marginal("lr")``; what :meth:`MarginalResult.plot` draws).
    name : str, optional
    ax : matplotlib Axes, optional
    marks : mapping of str to value, optional
        Native values to mark, e.g. ``{"default": ..., "incumbent": ...}``; the legend
        sits in a row above the axes, where it covers nothing.
    grid_size : int, default=100
        Grid points of a numerical parameter (FanovaResult only; a MarginalResult keeps
        its grid). A categorical parameter gets all its choices: points with error bars,
        sorted by their mean when there are more than 20, and only as many named as fit
        (the x label says so).

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_result(result, ("FanovaResult", "MarginalResult"), "plot_marginal")
    m = marginal_of(result, (name,), grid_size, "plot_marginal")
    name = m.params[0]
    data = marginal_plot_data(m, marks=marks)
    ax = new_axes(ax, "plot_marginal", (5.0, 3.4))
    label = name
    if data.tick_labels is not None:  # points, not bars: differences matter, not zero
        order = category_order(data.mean)  # many choices: sorted by the marginal
        x = np.empty(data.x.size)
        x[order] = np.arange(data.x.size, dtype=np.float64)
        many = x.size > MANY_CHOICES
        ax.errorbar(x, data.mean, yerr=[data.mean - data.lower, data.upper - data.mean],
                    fmt="o", color="tab:blue", capsize=0 if many else 4,
                    markersize=2.5 if many else 6.0, linewidth=1.0 if many else 1.5,
                    label="mean ± std")
        ax.set_xlim(-0.5, len(data.x) - 0.5)
        named = set_category_ticks(ax, "x", [data.tick_labels[j] for j in order])
        param = None if m.space is None else m.space[name]
        label = category_label(name, x.size, len(param.choices) if isinstance(
            param, Categorical) else None, named, "mean" if many else None)
        positions = {mark: float(x[round(pos)]) for mark, pos in data.marks.items()}
    else:
        ax.plot(data.x, data.mean, color="tab:blue", label="mean ± std")
        ax.fill_between(data.x, data.lower, data.upper, color="tab:blue", alpha=0.25,
                        linewidth=0)
        if data.log:
            set_log_axis(ax, "x", data.x)
        positions = data.marks
    for mark, pos in positions.items():
        color, style = MARK_STYLES.get(mark, OTHER_MARK)
        ax.axvline(pos, color=color, linestyle=style, linewidth=1.2, label=mark)
    set_xlabel(ax, label)
    ax.set_ylabel(f"predicted {'objective' if result.cap_value is None else 'capped objective'}")
    legend_above(ax, f"Marginal of {name}")  # above the axes: it covers nothing drawn
    return ax


@bounded_text
def plot_interaction(
    result: FanovaResult | MarginalResult, first: str | None = None, second: str | None = None,
    *, ax: Any = None, grid_size: int = 40,
) -> Any:
    """Heatmap of the exact joint marginal of two parameters (Hutter et al. 2014, Fig. 2).

    Parameters
    ----------
    result : FanovaResult or MarginalResult
        An analysis (then ``first`` and ``second`` are required), or a two-parameter
        marginal (``result.marginal("a", "b")``; what :meth:`MarginalResult.plot` draws).
    first, second : str, optional
        Parameters on the x and y axes.
    ax : matplotlib Axes, optional
    grid_size : int, default=40
        Grid points per parameter (FanovaResult only); a categorical parameter with
        more choices shows that many of them, evenly thinned, and names only as many as
        fit (the axis label says so).

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_result(result, ("FanovaResult", "MarginalResult", "PartialDependenceResult"),
                 "plot_interaction")
    m = marginal_of(result, (first, second), grid_size, "plot_interaction")
    first, second = m.params
    ax = new_axes(ax, "plot_interaction", (5.4, 4.2))
    (x, xt, xlog), (y, yt, ylog) = (axis_of(None if m.space is None else m.space[name], grid)
                                    for name, grid in zip(m.params, m.grid, strict=True))
    mesh = ax.pcolormesh(x, y, m.mean.T, shading="nearest", cmap="viridis", rasterized=True)
    ax.figure.colorbar(mesh, ax=ax, label="predicted objective")
    style_axes_2d(ax, x, y, (xt, yt), (xlog, ylog), (first, second),
                  (n_choices(m.space, first), n_choices(m.space, second)))
    set_title(ax, f"Joint marginal of {first} and {second}")
    return ax


@bounded_text
def plot_importance_history(snapshots: Sequence[Any], *, ax: Any = None, top: int = 5) -> Any:
    """Importance over trials from a live callback's refits (``cb.history``).

    Parameters
    ----------
    snapshots : sequence of ImportanceSnapshot
    ax : matplotlib Axes, optional
    top : int, default=5
        Parameters shown: the most important at the last refit.

    Returns
    -------
    matplotlib.axes.Axes
    """
    data = trajectory_plot_data(snapshots, top=top)
    ax = new_axes(ax, "plot_importance_history", (6.0, 3.4))
    for name, mean, std in zip(data.params, data.mean, data.std, strict=True):
        (line,) = ax.plot(data.n_trials, mean, marker="o", markersize=3, label=name)
        ax.fill_between(data.n_trials, mean - std, mean + std, color=line.get_color(),
                        alpha=0.15, linewidth=0)
    ax.set_xlabel("trials")
    ax.set_ylabel("fraction of variance")
    ax.set_ylim(bottom=0.0)
    set_title(ax, "Importance while the study ran")
    ax.legend(fontsize="small")
    return ax


@bounded_text
def plot_tuning_risk(result: TuningRiskResult, *, ax: Any = None) -> Any:
    """Relative tuning risk per parameter (mean ± std), the margin, and the verdicts.

    Parameters
    ----------
    result : TuningRiskResult
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_result(result, ("TuningRiskResult",), "plot_tuning_risk")
    data = risk_plot_data(result)
    ax = new_axes(ax, "plot_tuning_risk", (6.0, 0.45 * len(data.params) + 1.4))
    y = np.arange(len(data.params), dtype=np.float64)
    colors = np.where(data.non_inferior, "tab:green", "tab:red")
    ax.barh(y, data.mean, xerr=np.nan_to_num(data.std), color=colors, capsize=3, height=0.6)
    ax.axvline(data.margin, color="0.3", linestyle="--", linewidth=1.0,
               label=f"margin {data.margin:g}")
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{bounded(p, MAX_BAR_LABEL_CHARS)}  ({'can fix' if ok else 'tune'})"
                        for p, ok in zip(data.params, data.non_inferior, strict=True)])
    ax.invert_yaxis()
    ax.set_xlabel("relative tuning risk (fixed - tuned) / tuned, mean ± std")
    set_title(ax, "Tuning risk of fixing each parameter at its default")
    ax.legend(fontsize="small")
    return ax


@bounded_text
def plot_subspace(result: SubspaceResult, *, ax: Any = None) -> Any:
    """Per parameter, the importance that decided and the cost of fixing it, with the margin.

    Two bars per parameter (kept ones on top): the capped importance of the result's
    notion (bottom axis, fraction of variance) and the predicted cost of fixing the
    parameter at its default, mean ± std over trees (top axis, objective units),
    with the risk margin as a dashed line on the cost axis.

    Parameters
    ----------
    result : SubspaceResult
        From :func:`~hpinsight.suggest_subspace`.
    ax : matplotlib Axes, optional
        Where to draw; the cost bars go on a twin axis sharing its y axis.

    Returns
    -------
    matplotlib.axes.Axes
        The importance axes; the cost bars are on its twin (in ``ax.figure.axes``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(40, seed=0)
    >>> history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    >>> sub = hp.suggest_subspace(history, surrogate=hp.Forest(n_trees=8), seed=0)
    >>> ax = hp.plotting.plot_subspace(sub, ax=Figure().add_subplot())
    >>> [t.get_text() for t in ax.get_yticklabels()][0]
    'x  (keep)'
    """
    check_result(result, ("SubspaceResult",), "plot_subspace")
    data = subspace_plot_data(result)
    ax = new_axes(ax, "plot_subspace", (6.5, 0.55 * len(data.params) + 1.6))
    y = np.arange(len(data.params), dtype=np.float64)
    height = 0.38
    bars = ax.barh(y - height / 2, np.nan_to_num(data.importance), height=height,
                   color=np.where(data.keep, "tab:blue", "lightsteelblue").tolist(),
                   label=data.importance_label)
    ax.set_xlim(left=0.0)
    ax.set_xlabel(f"{data.importance_label} (fraction of variance)")
    ax.set_yticks(y)
    ax.set_yticklabels([bounded(label, MAX_BAR_LABEL_CHARS) for label in data.labels])
    cost = ax.twiny()
    risk = cost.barh(y + height / 2, np.nan_to_num(data.risk_mean), height=height,
                     xerr=np.nan_to_num(data.risk_std), color="tab:orange", capsize=3,
                     label="cost of fixing at the default (mean ± std)")
    margin = cost.axvline(data.margin, color="0.3", linestyle="--", linewidth=1.0,
                          label=f"risk margin {data.margin:.3g}")
    cost.axvline(0.0, color="black", linewidth=0.8)
    cost.set_xlabel("cost of fixing (objective units)")
    ax.invert_yaxis()  # shared with the twin: kept parameters on top
    ax.legend(handles=[bars, risk, margin], fontsize="small", loc="lower right")
    if data.note:  # the analysis among the best without signal: said, not drawn
        ax.set_xlabel(f"{ax.get_xlabel()}\n{data.note}")
    set_title(ax, "Which parameters to keep tuning", pad=28)
    return ax
