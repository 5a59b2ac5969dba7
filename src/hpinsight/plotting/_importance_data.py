"""Plot data of importances, marginals, importance trajectories, tuning risk and subspaces."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._fanova_result import among_best_label
from .._shared import NO_CLEAR_SIGNAL, no_signal_words
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..space import Categorical
from ._common import axis_of, drawn_by

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._fanova_result import FanovaResult, MarginalResult
    from .._risk import TuningRiskResult
    from .._subspace import SubspaceResult

__all__ = [
    "ImportancePlotData",
    "MarginalPlotData",
    "RiskPlotData",
    "SubspacePlotData",
    "TrajectoryPlotData",
    "importance_plot_data",
    "marginal_plot_data",
    "risk_plot_data",
    "subspace_plot_data",
    "trajectory_plot_data",
]


@dataclass(frozen=True, slots=True)
class ImportancePlotData:
    """Bars with whiskers: fractions of variance, most important first.

    Attributes
    ----------
    labels : tuple of str
        One per effect: a parameter, or ``"a x b"`` for an interaction.
    mean, std : ndarray of shape (n,)
    capped_mean, capped_std : ndarray of shape (n,) or None
        The same effects in a capped analysis (Sec. 3.3), side by side.
        None also where a capped analysis was given but more than a quarter of its
        refits find no signal (:attr:`~hpinsight.results.FanovaResult.signal_doubtful`): its shares are
        fractions of next to nothing, and ``note`` says so instead.
    capped_label : str
    n_effects : int
        Effects ranked, of which ``labels`` are the first (0: not known).
    note : str
        What the figure says in place of bars it does not draw ("" when it draws them
        all).
    """

    labels: tuple[str, ...]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    capped_mean: NDArray[np.float64] | None
    capped_std: NDArray[np.float64] | None
    capped_label: str
    n_effects: int = 0
    note: str = ""


def importance_plot_data(
    result: FanovaResult, *, top: int = 10, capped: FanovaResult | None = None
) -> ImportancePlotData:
    """Plot data of the ``top`` effects of ``result`` (interactions too, if computed).

    Parameters
    ----------
    result : FanovaResult
    top : int, default=10
        How many effects, ranked by ``result``.
    capped : FanovaResult, optional
        A capped analysis of the same space, shown beside each bar, unless more than a
        quarter of its refits find no signal (then ``note`` says so and no capped bar is drawn; the same
        for ``result`` itself when it is such a capped analysis: its ``mean`` and ``std``
        are NaN).

    Returns
    -------
    ImportancePlotData
    """
    ranking = result.ranking()
    ranked = ranking[:top]
    labels = tuple(" x ".join(imp.params) for imp in ranked)
    mean = np.array([imp.mean for imp in ranked])
    std = np.array([imp.std for imp in ranked])
    cmean = cstd = None
    label = note = ""
    if result.cap_value is not None and result.signal_doubtful:
        # a capped analysis without signal, drawn alone (a live capped refit): its shares
        # are fractions of next to nothing, as the report's best-25 % column says
        mean = np.full(len(ranked), np.nan)
        std = np.full(len(ranked), np.nan)
        note = _not_drawn(among_best_label(result), result)
    if capped is not None:
        label = among_best_label(capped)
        if capped.signal_doubtful:  # shares of next to nothing: not drawn as if they were
            note = _not_drawn(label, capped)
        else:
            pairs = [capped.importance(*imp.params) if len(imp.params) <= capped.max_order
                     else None for imp in ranked]
            cmean = np.array([np.nan if p is None else p.mean for p in pairs])
            cstd = np.array([np.nan if p is None else p.std for p in pairs])
    return ImportancePlotData(labels=labels, mean=mean, std=std, capped_mean=cmean,
                              capped_std=cstd, capped_label=label, n_effects=len(ranking),
                              note=note)


def _not_drawn(label: str, capped: FanovaResult) -> str:
    """Why a capped analysis's bars are not drawn, in two lines that fit a figure."""
    return (f"{label}, {NO_CLEAR_SIGNAL}: not drawn\n"
            f"({no_signal_words(capped.n_flat_refits, capped.n_refits)})")


@dataclass(frozen=True, slots=True)
class MarginalPlotData:
    """A main-effect marginal with a ±1 std band over trees (the paper's Fig. 1).

    Attributes
    ----------
    param : str
    x : ndarray of shape (G,)
        Native values (``0..G-1`` for categoricals).
    tick_labels : tuple of str or None
    log : bool
    mean, lower, upper : ndarray of shape (G,)
        Mean over trees and mean ± 1 std.
    marks : dict of str to float
        Positions of e.g. the default and the incumbent on ``x``'s scale.
    """

    param: str
    x: NDArray[np.float64]
    tick_labels: tuple[str, ...] | None
    log: bool
    mean: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    marks: dict[str, float]


def marginal_plot_data(
    result: FanovaResult | MarginalResult, name: str | None = None, *, grid_size: int = 100,
    marks: Mapping[str, Any] | None = None,
) -> MarginalPlotData:
    """Plot data of the exact marginal of ``name`` (see :meth:`FanovaResult.marginal`).

    Parameters
    ----------
    result : FanovaResult or MarginalResult
        An analysis and the parameter ``name`` to compute the marginal of, or a
        one-parameter marginal already computed (``name`` then optional).
    name : str, optional
        Required with a FanovaResult.
    grid_size : int, default=100
        Grid points of a numerical parameter (FanovaResult only; a MarginalResult keeps
        its own grid). A categorical parameter gets all its choices.
    marks : mapping of str to value, optional
        Native values to mark, e.g. ``{"default": 0.1, "incumbent": 0.03}``; values
        outside the parameter's range or choices are left out.

    Returns
    -------
    MarginalPlotData
    """
    m = marginal_of(result, (name,), grid_size, "marginal_plot_data")
    name = m.params[0]
    param = None if m.space is None else m.space[name]
    grid = m.grid[0]
    positions: dict[str, float] = {}
    x, ticks, log = axis_of(param, grid)
    if ticks is not None:  # categorical
        for label, value in (marks or {}).items():
            if value in grid:
                positions[label] = float(list(grid).index(value))
    else:
        for label, value in (marks or {}).items():
            if value is None:
                continue
            inside = (param.contains(value) if param is not None
                      else isinstance(value, numbers.Real) and x.min() <= value <= x.max())
            if inside:
                positions[label] = float(value)
    return MarginalPlotData(param=name, x=x, tick_labels=ticks, log=log, mean=m.mean,
                            lower=m.mean - m.std, upper=m.mean + m.std, marks=positions)


def marginal_of(
    result: FanovaResult | MarginalResult, names: tuple[str | None, ...], grid_size: int,
    caller: str,
) -> MarginalResult:
    """The marginal of ``names`` from a FanovaResult, or ``result`` itself if it is one
    (checked to have ``len(names)`` parameters, and ``names`` where given).

    A one-parameter marginal of a categorical parameter has all its choices, whatever
    ``grid_size`` (a grid thins them evenly).
    """
    # told apart by behaviour, not class: only an analysis computes marginals
    if not hasattr(result, "marginal"):
        given = tuple(n for n in names if n is not None)
        if len(result.params) != len(names) or (given and given != result.params):
            raise InvalidArgumentError(
                f"{caller} got a MarginalResult of {result.params!r}; it draws "
                f"{len(names)}-parameter marginals{f' of {given!r}' if given else ''}. "
                "Use MarginalResult.plot(), which picks the right figure."
            )
        return result
    if any(n is None for n in names):
        example = "'lr'" if len(names) == 1 else "'lr', 'momentum'"
        raise InvalidArgumentTypeError(f"{caller} needs {len(names)} parameter name(s) with a FanovaResult, "
                        f"e.g. {caller}(result, {example}).")
    fan = cast("FanovaResult", result)
    wanted = [n for n in names if n is not None]
    if len(wanted) == 1 and wanted[0] in fan.space.names:
        param = fan.space[wanted[0]]
        if isinstance(param, Categorical):  # one parameter: every choice, however many
            grid_size = max(grid_size, len(param.choices))
    return fan.marginal(*wanted, grid_size=grid_size)


@dataclass(frozen=True, slots=True)
class TrajectoryPlotData:
    """Importance of each parameter over the course of a study.

    Attributes
    ----------
    n_trials : ndarray of shape (k,)
        Trials behind each refit.
    params : tuple of str
        Shown parameters: the most important at the last refit.
    mean, std : ndarray of shape (len(params), k)
        NaN where a parameter did not exist yet.
    """

    n_trials: NDArray[np.float64]
    params: tuple[str, ...]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]


def trajectory_plot_data(snapshots: Sequence[Any], *, top: int = 5) -> TrajectoryPlotData:
    """Plot data of a live callback's refits (``cb.history``: ImportanceSnapshot objects).

    Parameters
    ----------
    snapshots : sequence of ImportanceSnapshot
        In refit order.
    top : int, default=5
        Parameters shown: the most important at the last refit.

    Returns
    -------
    TrajectoryPlotData
    """
    if not isinstance(snapshots, Sequence) or isinstance(snapshots, str) or not all(
            hasattr(s, "importances") and hasattr(s, "n_trials") for s in snapshots):
        got = kind = type(snapshots).__name__
        if isinstance(snapshots, Sequence) and not isinstance(snapshots, str):
            # a sequence of something else: name the element, not the list
            kind = type(next(s for s in snapshots
                             if not (hasattr(s, "importances") and hasattr(s, "n_trials")))).__name__
            got = f"a {got} holding {kind}"
        hint = (" Pass the callback's history, cb.history." if hasattr(snapshots, "history")
                else drawn_by(kind))
        raise InvalidArgumentTypeError(
            "The 'snapshots' parameter of plot_importance_history must be a sequence of "
            f"ImportanceSnapshot (a live callback's cb.history). Got {got} instead.{hint}")
    if not snapshots:
        raise InvalidArgumentError("No refits to plot yet: the callback's history is empty. Run more "
                         "trials (at least min_trials) first.")
    params = tuple(list(snapshots[-1].importances)[:top])
    mean = np.full((len(params), len(snapshots)), np.nan)
    std = np.full_like(mean, np.nan)
    for k, snap in enumerate(snapshots):
        for i, name in enumerate(params):
            if name in snap.importances:
                mean[i, k] = snap.importances[name]
                std[i, k] = snap.stds.get(name, np.nan)
    n = np.array([float(s.n_trials) for s in snapshots])
    return TrajectoryPlotData(n_trials=n, params=params, mean=mean, std=std)


@dataclass(frozen=True, slots=True)
class RiskPlotData:
    """Relative tuning risk per parameter with its spread, the margin and the verdicts.

    Attributes
    ----------
    params : tuple of str
    mean, std : ndarray of shape (n,)
        ``d^R_i`` and ``s^R_i`` (Weerts 2018, Eq. 6-7).
    non_inferior : ndarray of bool, shape (n,)
        Holm-corrected verdicts.
    margin : float
    """

    params: tuple[str, ...]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    non_inferior: NDArray[np.bool_]
    margin: float


def risk_plot_data(result: TuningRiskResult) -> RiskPlotData:
    """Plot data of a tuning-risk table (see :func:`~hpinsight.tuning_risk`).

    Parameters
    ----------
    result : TuningRiskResult

    Returns
    -------
    RiskPlotData
    """
    rows = result.rows
    return RiskPlotData(
        params=tuple(r.param for r in rows),
        mean=np.array([r.relative_mean for r in rows]),
        std=np.array([r.relative_std for r in rows]),
        non_inferior=np.array([r.non_inferior for r in rows], dtype=bool),
        margin=result.margin,
    )


@dataclass(frozen=True, slots=True)
class SubspacePlotData:
    """Per parameter, the importance that decided and the cost of fixing it.

    Attributes
    ----------
    params : tuple of str
        Kept parameters first, then fixed ones (the order of
        :meth:`SubspaceResult.explain`).
    labels : tuple of str
        ``"lr  (keep)"`` or ``"a  (fix at 0.5)"``.
    keep : ndarray of bool, shape (n,)
    importance : ndarray of shape (n,)
        The main effect's share among the best trials (:attr:`SubspaceResult.importance_top`).
    importance_label : str
    risk_mean, risk_std : ndarray of shape (n,)
        Predicted cost of fixing each parameter at its default, objective units
        (:class:`SurrogateRisk`); NaN where not assessed.
    margin : float
        The risk margin, objective units.
    note : str
        Why the importance bars are not drawn ("" when they are): more than a quarter of
        the refits of the
        analysis among the best find no signal (:attr:`DecisionResult.top_doubtful`),
        and ``importance`` is NaN.
    """

    params: tuple[str, ...]
    labels: tuple[str, ...]
    keep: NDArray[np.bool_]
    importance: NDArray[np.float64]
    importance_label: str
    risk_mean: NDArray[np.float64]
    risk_std: NDArray[np.float64]
    margin: float
    note: str = ""


def subspace_plot_data(result: SubspaceResult) -> SubspacePlotData:
    """Plot data of a subspace suggestion (see :func:`~hpinsight.suggest_subspace`).

    Parameters
    ----------
    result : SubspaceResult

    Returns
    -------
    SubspacePlotData
    """
    params = (*result.keep, *result.fixed)
    importance = result.importance_top
    label = f"importance among the best {100 * result.top_quantile:.0f} % of trials"
    risks = [result.risks.get(n) for n in params]
    doubtful = result.decisions.top_doubtful  # shares of next to nothing: not drawn
    return SubspacePlotData(
        params=params,
        labels=tuple(f"{n}  (keep)" if n in result.keep else f"{n}  (fix at {_short(result.fixed[n])})"
                     for n in params),
        keep=np.array([n in result.keep for n in params], dtype=bool),
        importance=np.array([np.nan if doubtful else importance.get(n, np.nan)
                             for n in params], dtype=np.float64),
        importance_label=label,
        risk_mean=np.array([np.nan if r is None else r.mean for r in risks], dtype=np.float64),
        risk_std=np.array([np.nan if r is None else r.std for r in risks], dtype=np.float64),
        margin=float(result.margin),
        note=f"{NO_CLEAR_SIGNAL} among the best: not drawn" if doubtful else "",
    )


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else repr(value)
