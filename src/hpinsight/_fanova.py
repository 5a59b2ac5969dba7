"""Exact functional ANOVA of random-forest predictions.

Hutter, Hoos & Leyton-Brown, "An Efficient Approach for Assessing
Hyperparameter Importance", ICML 2014: Sections 2-3, Algorithms 1-2, Eq. 1-6,
and the capping of Section 3.3.

Estimand. For each tree ``T`` of the forest, its prediction ``y_T`` is a
function on the search space; under the space's product measure (uniform in
the encoded coordinate: log-uniform for ``log=True``, uniform over integer
values and over categorical choices, see ``_encoding``) it has the functional
ANOVA decomposition ``y_T = sum_U f_U`` (Eq. 4) and variance
``V = sum_U V_U`` (Eq. 6). We report ``F_U = V_U / V`` per tree -- computed
exactly from the tree's leaf partition -- and its mean and standard deviation
(``ddof=0``, as the reference implementation) over trees.

Conditional parameters: inactive entries are imputed with draws from the
parameter's measure before fitting (see ``surrogates.forest``), so the forest is a
function on the full product space and a conditional parameter's fraction is
its share of the variance under that product measure -- the part of the space
where it is inactive contributes nothing to it.

Where we differ from reference implementations:

* Optuna's ``FanovaImportanceEvaluator`` integrates log parameters in raw
  units, reports main effects only, drops the per-tree std and drops trials
  with conditional parameters. Here log parameters are integrated in log space,
  interactions of any order are available, std is kept, no trial is dropped.
* automl/fanova uses the same definitions; we additionally weight integer and
  categorical cells by their number of values (not by interval length).
* Trees whose prediction is constant over the space (``V = 0``) have no
  fractions; they are left out of means and stds and counted in
  ``FanovaResult.n_constant_trees``. If every tree is constant the objective
  is flagged constant and all importances are 0.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._encoding import measure_of
from ._history import TrialHistory
from ._optional import import_optional
from ._shared import (
    REPR_WIDTH,
    clip_text,
    grid_columns,
    join_items,
    json_array,
    json_value,
    readonly,
)
from ._space import SearchSpace
from ._validation import check_choice, check_int, check_real, check_seed
from .exceptions import (
    ConstantObjectiveWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
    UnknownNameError,
)
from .surrogates.forest import (
    Forest,
    compute_partition,
    decompose_forest,
    fit_forest,
    forest_from_estimator,
    marginal_grid,
)
from .surrogates.gp import GaussianProcessSurrogate, decompose_gp, fit_gp

if TYPE_CHECKING:
    from numpy.typing import NDArray


__all__ = ["FanovaResult", "Importance", "MarginalResult", "fanova"]


#: The verdicts an :class:`Importance` can carry.
VERDICTS = ("resolved", "uncertain", "indistinguishable from nothing")
#: Shares below this are nothing whatever the null says: they round to 0.0 % as reports
#: show them (a fit that gives the shadows exactly nothing would otherwise call a share
#: of 1e-9 "uncertain", next to a printed 0.0 %).
NEGLIGIBLE_SHARE = 5e-4


@dataclass(frozen=True, slots=True)
class Importance:
    """Fraction of variance explained by one effect, over the trees (or draws) of a model.

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it is one row of :meth:`FanovaResult.to_frame` and one
    bar of :meth:`FanovaResult.plot`.

    Attributes
    ----------
    params : tuple of str
        One name for a main effect, several for their pure interaction.
    mean, std : float
        Mean and standard deviation over non-constant trees (or draws).
    null : float or None
        The share a *shadow* column got: a copy of a parameter shuffled among trials
        close in trial order, so with the same marginal (also as the sampler moved it)
        and no bearing on the objective (Gaussian process; main effects and pairs).
    verdict : {"resolved", "uncertain", "indistinguishable from nothing"}
        "indistinguishable from nothing" when the mean does not exceed ``null`` or is
        below ``NEGLIGIBLE_SHARE`` (5e-4); else "uncertain" when the band mean - std
        reaches ``null`` (or 0 without a null): the effect is above the null, but not
        by more than its own spread; else "resolved".

    Examples
    --------
    >>> from hpinsight.results import Importance
    >>> imp = Importance(("lr",), 0.62, 0.05)
    >>> imp
    Importance(lr: 0.6200 ± 0.0500)
    >>> imp.to_dict()["params"]
    ['lr']
    """

    params: tuple[str, ...]
    mean: float
    std: float
    null: float | None = None
    verdict: str = "resolved"

    def __repr__(self) -> str:
        flag = "" if self.verdict == "resolved" else f", {self.verdict}"
        tail = f": {self.mean:.4f} ± {self.std:.4f}{flag})"
        head = "Importance("
        names = clip_text(" x ".join(self.params), REPR_WIDTH - len(head) - len(tail))
        return f"{head}{names}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (a non-finite number becomes None)."""
        return {"params": list(self.params), "mean": json_value(self.mean),
                "std": json_value(self.std), "null": json_value(self.null),
                "verdict": self.verdict}


def _verdict(mean: float, std: float, null: float | None) -> str:
    if mean < NEGLIGIBLE_SHARE or (null is not None and mean <= null):
        return VERDICTS[2]
    return VERDICTS[1] if mean - std <= (null or 0.0) else VERDICTS[0]


@dataclass(frozen=True, slots=True)
class MarginalResult:
    """Marginal prediction of one or two parameters, averaged over all others.

    Attributes
    ----------
    params : tuple of str
    grid : tuple of tuple
        Evaluation values of each parameter in native units (choices for
        categoricals).
    encoded_grid : tuple of ndarray
        The same points in the encoded coordinate.
    per_tree : ndarray of shape (n_trees, G1[, G2])
        Each tree's exact marginal at the grid points.
    mean, std : ndarray of shape (G1[, G2])
        Over trees (``ddof=0``).
    space : SearchSpace or None
        The search space of the analysis (axis scales and category ticks of
        :meth:`plot`); None when the result was built by hand.
    cap_value : float or None
        The cap the analysed objective had (:attr:`FanovaResult.cap_value`).

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Categorical("k", ["a", "b"])])
    >>> configs = space.sample(100, seed=0)
    >>> y = [c["x"] + (c["k"] == "b") for c in configs]
    >>> m = hp.fanova(hp.TrialHistory(space, configs, y), seed=0, n_trees=8).marginal("k")
    >>> m.to_frame()["k"].tolist()
    ['a', 'b']
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> m.plot(ax=Figure().add_subplot()).get_xlabel()
    'k'
    """

    params: tuple[str, ...]
    grid: tuple[tuple[Any, ...], ...]
    encoded_grid: tuple[NDArray[np.float64], ...]
    per_tree: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    space: SearchSpace | None = field(default=None, repr=False, compare=False)
    cap_value: float | None = None

    def __repr__(self) -> str:
        shape = "x".join(str(len(g)) for g in self.grid)
        tail = (f", grid={shape}, trees={self.per_tree.shape[0]}, "
                f"range={_range_text(self.mean)})")
        head = "MarginalResult(params="
        return f"{head}{clip_text(repr(self.params), REPR_WIDTH - len(head) - len(tail))}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (grids, mean and std as nested lists)."""
        return {
            "params": list(self.params),
            "grid": [[json_value(v) for v in g] for g in self.grid],
            "mean": json_array(self.mean),
            "std": json_array(self.std),
            "cap_value": json_value(self.cap_value),
        }

    def to_frame(self) -> Any:
        """Long-format ``pandas.DataFrame``: one row per grid point.

        Returns
        -------
        pandas.DataFrame
            One column per parameter (native values), then ``mean`` and ``std``.
        """
        pd = import_optional("pandas", "MarginalResult.to_frame")
        data = grid_columns(self.params, self.grid)
        data["mean"] = self.mean.ravel()
        data["std"] = self.std.ravel()
        return pd.DataFrame(data)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the marginal: a curve with a ±1 std band, or a heatmap for two parameters.

        Delegates to :func:`hpinsight.plotting.plot_marginal` (one parameter; ``marks=``
        is passed on) or :func:`hpinsight.plotting.plot_interaction` (two).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_interaction, plot_marginal

        if len(self.params) == 1:
            return plot_marginal(self, ax=ax, **kwargs)
        return plot_interaction(self, ax=ax, **kwargs)


def native_grid(space: SearchSpace, col: int, encoded: NDArray[np.float64]) -> tuple[Any, ...]:
    """The encoded grid ``encoded`` of column ``col`` in the parameter's native units."""
    X = np.full((encoded.size, len(space)), np.nan)
    X[:, col] = encoded
    name = space.params[col].name
    return tuple(row.get(name) for row in space.decode(X))


def _range_text(values: NDArray[np.float64]) -> str:
    """``"[low, high]"`` of the finite values, 4 significant digits."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return "[]"
    return f"[{finite.min():.4g}, {finite.max():.4g}]"


@dataclass(frozen=True, slots=True)
class FanovaResult:
    """Functional ANOVA decomposition of a surrogate (Gaussian process or random forest)
    over a search space. "Trees" below are the forest's trees or the GP's bootstrap draws.

    Use :meth:`importance`, :meth:`ranking` and :meth:`marginal`; the raw
    per-tree numbers are kept so any summary can be recomputed without a refit.

    Attributes
    ----------
    space : SearchSpace
        The history's space, plus the conditions its trials imply for parameters that
        are inactive in some trials but have none (Optuna's define-by-run studies).
    subsets : tuple of tuple of str
        The effects computed: all subsets of size 1 to ``max_order``.
    variances : ndarray of shape (n_trees, n_subsets)
        ``V_U`` per tree (objective units squared).
    tree_variances : ndarray of shape (n_trees,)
        Total prediction variance ``V`` of each tree.
    tree_means : ndarray of shape (n_trees,)
        Mean prediction ``f_0`` of each tree.
    max_order : int
    n_trials : int
        Trials the forest was fit on.
    n_excluded : int
        Trials left out: by the adapter that built the history (not
        COMPLETE, non-finite value) plus those whose value was NaN or infinite.
    n_inactive : dict of str to int
        Per parameter, how many of the used trials had it inactive or missing.
    cap_value : float or None
        The cap applied to the objective (Section 3.3), if any.
    cap_quantile : float or None
    direction : {"minimize", "maximize"}
    oob_r2 : float or None
        Out-of-sample R² of the surrogate: out-of-bag for a forest hpinsight fit
        with a bootstrap, leave-one-out for the Gaussian process.
    seed : int or None
    model : Forest or GaussianProcessSurrogate
        The fitted surrogate; ``model.predict_per_tree(X)`` gives each tree's (or
        draw's) prediction at encoded configurations.
    surrogate : {"forest", "gp"}
        Which surrogate was decomposed. For "gp", "trees" are the bootstrap draws
        of the Gaussian process (see ``hpinsight.surrogates.gp``).
    null_fractions : (float, float) or None
        The share of the largest shadow main effect and of the largest shadow
        interaction (see :attr:`Importance.null`); None for a forest.
    """

    space: SearchSpace
    subsets: tuple[tuple[str, ...], ...]
    variances: NDArray[np.float64]
    tree_variances: NDArray[np.float64]
    tree_means: NDArray[np.float64]
    max_order: int
    n_trials: int
    n_excluded: int
    n_inactive: dict[str, int]
    cap_value: float | None
    cap_quantile: float | None
    direction: str
    oob_r2: float | None
    seed: int | None
    model: Forest | GaussianProcessSurrogate = field(repr=False)
    surrogate: str = "forest"
    null_fractions: tuple[float, float] | None = None
    _index: dict[frozenset[str], int] = field(init=False, repr=False, compare=False)
    _fractions: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {frozenset(s): i for i, s in enumerate(self.subsets)})
        with np.errstate(divide="ignore", invalid="ignore"):
            fractions = self.variances / self.tree_variances[:, None]
        fractions[~(self.tree_variances > 0)] = np.nan
        object.__setattr__(self, "_fractions", readonly(fractions))

    # -- summaries ----------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        """Number of trees in the forest."""
        return int(self.tree_variances.size)

    @property
    def valid_trees(self) -> NDArray[np.bool_]:
        """Trees with positive prediction variance (the ones fractions are averaged over)."""
        return self.tree_variances > 0

    @property
    def n_constant_trees(self) -> int:
        """Trees whose prediction is constant over the space (left out of fractions)."""
        return int(self.n_trees - self.valid_trees.sum())

    @property
    def is_constant(self) -> bool:
        """True when every tree is constant: the objective shows no variation to explain."""
        return not bool(self.valid_trees.any())

    @property
    def fractions(self) -> NDArray[np.float64]:
        """``F_U = V_U / V`` per tree, shape (n_trees, n_subsets); NaN rows for constant
        trees. Computed once (read-only)."""
        return self._fractions

    @property
    def total_variance(self) -> float:
        """Mean over trees of the prediction variance ``V`` over the space (Eq. 5)."""
        return float(self.tree_variances.mean())

    @property
    def unexplained_fraction(self) -> Importance:
        """Share of variance in interactions of order above ``max_order`` (mean, std)."""
        return self._summarize((), 1.0 - np.nansum(self.fractions, axis=1))

    def null_fraction(self, order: int) -> float | None:
        """The share of the largest shadow effect of this order (1 or 2); None without
        shadows (a forest) or for higher orders."""
        if self.null_fractions is None or order not in (1, 2):
            return None
        return self.null_fractions[order - 1]

    def _summarize(self, params: tuple[str, ...], per_tree: NDArray[np.float64]) -> Importance:
        valid = self.valid_trees
        null = self.null_fraction(len(params)) if params else None
        if not valid.any():
            return Importance(params, 0.0, 0.0, null, VERDICTS[2])
        vals = per_tree[valid]
        mean, std = float(vals.mean()), float(vals.std())
        return Importance(params, mean, std, null, _verdict(mean, std, null) if params else VERDICTS[0])

    def importance(self, *names: str) -> Importance:
        """Fraction of variance of one parameter (main effect) or of the pure
        interaction of several.

        Parameters
        ----------
        *names : str
            One or more parameter names (order does not matter).

        Returns
        -------
        Importance

        Raises
        ------
        KeyError
            If a name is not in the space or the subset was not computed
            (raise ``max_order``).
        """
        if not names:
            raise InvalidArgumentTypeError("importance() needs at least one parameter name.")
        for n in names:
            self.space.index(n)
        key = frozenset(names)
        if len(key) != len(names):
            raise UnknownNameError(f"importance() got a repeated parameter name in {names!r}.")
        if key not in self._index:
            raise UnknownNameError(
                f"The interaction {names!r} of order {len(names)} was not computed; "
                f"this result has max_order={self.max_order}. Call fanova(..., max_order={len(names)})."
            )
        i = self._index[key]
        ordered = self.subsets[i]
        return self._summarize(ordered, self.fractions[:, i])

    def ranking(self, order: int | None = None) -> tuple[Importance, ...]:
        """Effects sorted by mean fraction, largest first.

        Parameters
        ----------
        order : int, optional
            Only effects of this many parameters (1 = main effects). Default: all.
        """
        ranked = [self._summarize(s, self._fractions[:, i]) for i, s in enumerate(self.subsets)
                  if order is None or len(s) == order]
        return tuple(sorted(ranked, key=lambda imp: (-imp.mean, imp.params)))

    # -- marginals ------------------------------------------------------------------------
    def marginal(self, *names: str, grid_size: int = 100) -> MarginalResult:
        """Exact marginal prediction of one or two parameters (Eq. 1), per tree.

        Parameters
        ----------
        *names : str
            One or two parameter names.
        grid_size : int, default=100
            Points per continuous parameter (evenly spaced in the encoded
            coordinate, i.e. log-spaced for ``log=True``). Discrete parameters
            use all their values, thinned to ``grid_size`` when there are more.

        Returns
        -------
        MarginalResult
        """
        if len(names) not in (1, 2):
            raise InvalidArgumentTypeError(f"marginal() takes one or two parameter names. Got {len(names)}.")
        if len(set(names)) != len(names):
            raise InvalidArgumentError(f"marginal() got a repeated parameter name in {names!r}.")
        check_int(grid_size, "grid_size", "FanovaResult.marginal", minimum=2)
        cols = [self.space.index(n) for n in names]
        measures = [measure_of(p) for p in self.space.params]
        enc = [measures[c].grid(grid_size) for c in cols]
        per_tree = np.empty((self.n_trees, *[e.size for e in enc]))
        if isinstance(self.model, GaussianProcessSurrogate):
            per_tree[...] = self.model.marginal_per_draw(cols, enc)
        else:
            for t, tree in enumerate(self.model.trees):
                part = compute_partition(tree, measures)
                a = marginal_grid(part, cols) if part.value.size else np.full([1] * len(cols), part.mean)
                cells = [part.cells_of(c, e) if part.value.size else np.zeros(e.size, np.intp) for c, e in zip(cols, enc, strict=True)]
                per_tree[t] = a[np.ix_(*cells)]
        return MarginalResult(
            params=tuple(names),
            grid=tuple(native_grid(self.space, c, e) for c, e in zip(cols, enc, strict=True)),
            encoded_grid=tuple(readonly(e) for e in enc),
            per_tree=readonly(per_tree),
            mean=readonly(per_tree.mean(axis=0)),
            std=readonly(per_tree.std(axis=0)),
            space=self.space,
            cap_value=self.cap_value,
        )

    # -- export ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        tops = [(i.params[0], f"={i.mean:.3f}") for i in self.ranking(order=1)[:3]]
        flag = ", constant objective" if self.is_constant else ""
        head = (f"FanovaResult(n_trials={self.n_trials}, surrogate={self.surrogate!r}, "
                f"n_trees={self.n_trees}, max_order={self.max_order}, top=[")
        tail = f"]{flag})"
        return f"{head}{join_items(tops, REPR_WIDTH - len(head) - len(tail))}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary: every effect's mean and std, plus what was analysed."""
        return {
            "params": list(self.space.names),
            "effects": [imp.to_dict() for imp in self.ranking()],
            "unexplained_fraction": self.unexplained_fraction.to_dict(),
            "total_variance": json_value(self.total_variance),
            "max_order": self.max_order,
            "n_trees": self.n_trees,
            "n_constant_trees": self.n_constant_trees,
            "is_constant": self.is_constant,
            "n_trials": self.n_trials,
            "n_excluded": self.n_excluded,
            "n_inactive": dict(self.n_inactive),
            "cap_value": json_value(self.cap_value),
            "cap_quantile": self.cap_quantile,
            "direction": self.direction,
            "oob_r2": json_value(self.oob_r2),
            "seed": self.seed,
            "surrogate": self.surrogate,
        }

    def to_frame(self) -> Any:
        """``pandas.DataFrame`` with one row per effect: params, order, mean, std, null, verdict.

        Rows are the :class:`Importance` objects of :meth:`ranking`, largest first;
        ``params`` joins an interaction's names with ``" x "``.
        """
        pd = import_optional("pandas", "FanovaResult.to_frame")
        rows = [
            {"params": " x ".join(i.params), "order": len(i.params), "mean": i.mean, "std": i.std,
             "null": i.null, "verdict": i.verdict}
            for i in self.ranking()
        ]
        return pd.DataFrame(rows, columns=["params", "order", "mean", "std", "null", "verdict"])

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Bars of the fractions of variance; see :func:`hpinsight.plotting.plot_importance`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            ``top`` and ``capped``, passed on to ``plot_importance``.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from matplotlib.figure import Figure
        >>> import hpinsight as hp
        >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
        >>> configs = space.sample(100, seed=0)
        >>> result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0, n_trees=8)
        >>> ax = result.plot(ax=Figure().add_subplot(), top=1)
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['x']
        """
        from .plotting import plot_importance

        return plot_importance(self, ax=ax, **kwargs)


def fanova(
    history: TrialHistory,
    *,
    n_trees: int = 64,
    seed: int | None = None,
    max_order: int = 1,
    cap_quantile: float | None = None,
    cap_value: float | None = None,
    direction: Literal["minimize", "maximize"] | None = None,
    forest: Any = None,
    surrogate: Literal["gp", "forest"] | None = None,
    n_draws: int = 16,
    significance: bool = True,
    min_samples_leaf: int = 1,
    max_features: float = 1.0,
    max_samples: int | float | Literal["auto"] | None = "auto",
    n_jobs: int | None = None,
) -> FanovaResult:
    """Exact functional ANOVA of a surrogate model fit on a trial history.

    Parameters
    ----------
    history : TrialHistory
        The trials: ``TrialHistory(space, configs, y)`` for plain data, or an
        adapter's (``TrialHistory.from_optuna(study)``, ``.from_smac(...)``). It
        brings the space (which fixes the measure integrated over), the objective
        values and the direction.
    n_trees : int, default=64
        Trees in the forest (``surrogate="forest"``).
    seed : int, optional
        Same seed, bit-identical result.
    max_order : int, default=1
        Largest interaction order to compute (1 = main effects, 2 = all pairs).
    cap_quantile : float in (0, 1], optional
        Cap the objective at its ``cap_quantile`` quantile (the ``1 - q``
        quantile when maximizing) before fitting, so the analysis explains the
        variation among the best ``q`` fraction of trials (Section 3.3).
    cap_value : float, optional
        Cap the objective at this value instead (e.g. the default's score).
    direction : {"minimize", "maximize"}, optional
        Which way is better; used for capping. Defaults to the history's
        direction, else "minimize".
    forest : fitted scikit-learn tree ensemble, optional
        Analyse this forest (trained on ``history.space.encode(history.configs)``
        with inactive entries filled in) instead of fitting one. The history's
        trials are then only validated and counted; capping is not possible. A forest
        converted from an optimizer's own model (for example by
        ``hpinsight.integrations.smac.smac_forest``) is accepted as well.
    surrogate : {"gp", "forest"}, optional
        The model whose prediction is decomposed; default "gp", or "forest" when a
        fitted ``forest`` is given. "gp": a Gaussian process with one length scale
        per parameter, whose decomposition is exact for its posterior mean and which
        stays right on the clustered samples optimizers produce, where forests
        credit parameters that do nothing (see ``hpinsight.surrogates.gp`` and
        ``benchmarks/bench_biased.py``). "forest": a random forest, the paper's
        estimate, exact for the forest.
    n_draws : int, default=16
        With ``surrogate="gp"``: bootstrap draws of the posterior mean, over which
        means and stds are taken (``n_trees`` is then not used).
    significance : bool, default=True
        With ``surrogate="gp"``: fit the model once more with a shadow of every
        parameter (its values shuffled among trials close in trial order), and mark
        each main effect and pair that explains no more than the largest shadow as
        "indistinguishable from nothing" (:attr:`Importance.verdict`). The
        importances themselves are those of the model without shadows; the extra
        fit about doubles the cost.
    min_samples_leaf, max_features : forest options
        Passed to ``RandomForestRegressor``.
    max_samples : int, float, "auto" or None, default="auto"
        Rows per bootstrap sample; "auto" is ``min(n_trials, 10000)``.
    n_jobs : int, optional
        Cores used to fit the forest, as in scikit-learn: None means 1 (unless in a
        ``joblib.parallel_backend`` context), -1 all.

    Returns
    -------
    FanovaResult

    Raises
    ------
    TypeError
        ``history`` is not a TrialHistory (the message shows how to make one).
    InvalidDataError
        An empty history, or a forest that cannot be decomposed.

    Examples
    --------
    >>> import numpy as np, hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    >>> configs = space.sample(300, seed=0)
    >>> y = [10 * c["x"] + 0.1 * c["z"] for c in configs]
    >>> result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    >>> result.ranking()[0].params
    ('x',)
    >>> result.importance("x").mean > 0.95
    True
    """
    opts = _checked_options(
        history, n_trees=n_trees, seed=seed, max_order=max_order, cap_quantile=cap_quantile,
        cap_value=cap_value, direction=direction, forest=forest, surrogate=surrogate,
        n_draws=n_draws)
    space = history.space
    X = history.encoded()
    y, applied_cap = _capped_target(history.y, opts)
    index_subsets = [s for k in range(1, opts.max_order + 1)
                     for s in combinations(range(len(space)), k)]
    conditioned = _with_inferred_conditions(space, X)
    model: Forest | GaussianProcessSurrogate
    if opts.surrogate == "gp":  # its blocks need the conditions; inferred here once
        model = fit_gp(conditioned, X, y, n_draws=opts.n_draws, seed=opts.seed,
                       shadows=significance)
        variances, tree_var, tree_mean = decompose_gp(model, index_subsets)
        fit_r2 = model.loo_r2
    else:
        model = forest_from_estimator(forest, len(space)) if forest is not None else fit_forest(
            space, X, y, n_trees=opts.n_trees, seed=opts.seed,
            min_samples_leaf=min_samples_leaf, max_features=max_features,
            max_samples=max_samples, n_jobs=n_jobs)
        variances, tree_var, tree_mean = decompose_forest(model, space, index_subsets,
                                                           opts.max_order)
        fit_r2 = model.oob_r2
    names = space.names
    result = FanovaResult(
        space=conditioned,
        subsets=tuple(tuple(names[j] for j in s) for s in index_subsets),
        variances=readonly(variances),
        tree_variances=readonly(tree_var),
        tree_means=readonly(tree_mean),
        max_order=opts.max_order,
        n_trials=int(X.shape[0]),
        n_excluded=history.n_excluded,
        n_inactive={n: int(c) for n, c in zip(names, np.isnan(X).sum(axis=0), strict=True)},
        cap_value=applied_cap,
        cap_quantile=opts.cap_quantile,
        direction=opts.direction,
        oob_r2=fit_r2,
        seed=opts.seed,
        model=model,
        surrogate=opts.surrogate,
        null_fractions=model.null_fractions if isinstance(model, GaussianProcessSurrogate) else None,
    )
    if result.is_constant:
        kind = "forest" if opts.surrogate == "forest" else "Gaussian process"
        warnings.warn(
            f"The {kind}'s prediction does not vary over the search space ({X.shape[0]} "
            "trial(s) used): the objective looks constant, so every importance is 0.",
            ConstantObjectiveWarning,
            stacklevel=2,
        )
    return result


def _with_inferred_conditions(space: SearchSpace, X: NDArray[np.float64]) -> SearchSpace:
    """``space`` with the conditions its trials imply, for parameters that are inactive in
    some trials but have no condition (Optuna's define-by-run studies, where ``momentum``
    is suggested only under SGD). The result's marginals, partial dependence and regions
    then respect them: a region never splits on a parameter where it does not exist.
    The Gaussian process infers the same conditions itself (``surrogates.gp._blocks``), so its
    decomposition is the same either way; the forest's is fit on the space as given."""
    if not np.isnan(X).any():
        return space
    from .surrogates.gp._blocks import infer_conditions

    return infer_conditions(space, X) or space


@dataclass(frozen=True, slots=True)
class _Options:
    """The validated options of one :func:`fanova` call."""

    surrogate: Literal["gp", "forest"]
    n_trees: int
    n_draws: int
    seed: int | None
    max_order: int
    direction: Literal["minimize", "maximize"]
    cap_quantile: float | None
    cap_value: float | None


def _checked_options(history: Any, *, n_trees: int, seed: Any, max_order: int,
                     cap_quantile: Any, cap_value: Any, direction: Any, forest: Any,
                     surrogate: Any, n_draws: int) -> _Options:
    """Step 1 of :func:`fanova`: check the history and every option, once."""
    func = "fanova"
    if not isinstance(history, TrialHistory):
        raise InvalidArgumentTypeError(
            f"The 'history' parameter of {func} must be an hpinsight TrialHistory. Got "
            f"{type(history).__name__} instead. For plain data, pass "
            "fanova(hp.TrialHistory(space, configs, y)); from Optuna, "
            "fanova(hp.TrialHistory.from_optuna(study))."
        )
    if history.n_trials == 0:
        raise InvalidDataError(f"{func} got no trials (an empty history); it needs at least one.")
    n_trees = check_int(n_trees, "n_trees", func, minimum=1)
    n_draws = check_int(n_draws, "n_draws", func, minimum=1)
    chosen = surrogate if surrogate is not None else ("forest" if forest is not None else "gp")
    model_kind: Literal["gp", "forest"] = check_choice(chosen, "surrogate", func, ("gp", "forest"))
    if forest is not None and model_kind != "forest":
        raise InvalidArgumentError(
            f"{func} got a fitted 'forest' and surrogate={model_kind!r}; a given forest is "
            "decomposed as it is, so drop one of the two."
        )
    max_order = check_int(max_order, "max_order", func, minimum=1)
    if max_order > len(history.space):
        raise InvalidArgumentError(
            f"The 'max_order' parameter of {func} must be at most the number of parameters "
            f"({len(history.space)}). Got {max_order} instead."
        )
    better: Literal["minimize", "maximize"] = check_choice(
        history.direction if direction is None else direction, "direction", func,
        ("minimize", "maximize"))
    if cap_quantile is not None and cap_value is not None:
        raise InvalidArgumentError(f"{func} takes cap_quantile or cap_value, not both.")
    if cap_quantile is not None:
        cap_quantile = check_real(cap_quantile, "cap_quantile", func, low=0.0, high=1.0,
                                  low_open=True)
    if cap_value is not None:
        cap_value = check_real(cap_value, "cap_value", func, low=-math.inf, high=math.inf)
    if forest is not None and (cap_quantile is not None or cap_value is not None):
        raise InvalidArgumentError(
            f"{func} cannot cap the objective of an already fitted forest; drop 'forest' so "
            "hpinsight refits on the capped values, or cap y before fitting yours."
        )
    return _Options(model_kind, n_trees, n_draws, check_seed(seed, func), max_order, better,
                    cap_quantile, cap_value)


def _capped_target(y: NDArray[np.float64],
                   opts: _Options) -> tuple[NDArray[np.float64], float | None]:
    """Step 2 of :func:`fanova`: the objective the model is fitted on, capped at the good
    part of the space when asked (Hutter et al. 2014, Sec. 3.3), and the cap applied."""
    if opts.cap_quantile is not None:
        q = opts.cap_quantile if opts.direction == "minimize" else 1.0 - opts.cap_quantile
        cap: float | None = float(np.quantile(y, q))
    else:
        cap = opts.cap_value
    if cap is None:
        return np.array(y, dtype=np.float64), None
    return (np.minimum(y, cap) if opts.direction == "minimize" else np.maximum(y, cap)), cap
