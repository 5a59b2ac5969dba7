"""What :func:`hpinsight.fanova` returns: each effect's share of the variance
(:class:`Importance`), marginal curves (:class:`MarginalResult`) and the whole result
(:class:`FanovaResult`), with the verdicts and the cut-off every surface uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from ._optional import import_optional
from ._shared import (
    MATTERS_SHARE,
    NEGLIGIBLE_SHARE,
    REPR_WIDTH,
    clip_text,
    fmt_share,
    grid_columns,
    join_items,
    json_array,
    json_value,
    readonly,
)
from ._validation import check_int
from .exceptions import (
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
    UnknownNameError,
)
from .space import SearchSpace, measure_of
from .surrogates import GP, Forest, describe
from .surrogates.forest import (
    FittedForest,
    compute_partition,
    marginal_grid,
)
from .surrogates.gp import FittedGP

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._history import TrialHistory


__all__ = ["INTERVAL_LEVEL", "INTERVAL_Z", "MATTERS_SHARE", "NEGLIGIBLE_SHARE", "NO_EFFECT", "NO_SIGNAL_SHARE", "VERDICTS", "FanovaResult", "Importance", "MarginalResult",
           "among_best_label", "native_grid", "other_history", "verdict"]


#: The verdicts an :class:`Importance` can carry.
VERDICTS = ("resolved", "uncertain", "indistinguishable from nothing", "negligible")
#: The verdicts that count as no effect for every decision: nothing shown, or an effect
#: shown whose share is below ``NEGLIGIBLE_SHARE``.
NO_EFFECT = frozenset(VERDICTS[2:])
#: The level of an effect's interval (:attr:`Importance.interval`), which its verdict
#: reads, and the normal quantile that makes it: ``mean ± INTERVAL_Z std``.
INTERVAL_LEVEL = 0.90
INTERVAL_Z = 1.6448536269514722  # scipy.stats.norm.ppf(0.95)
#: With more than this share of a GP's hyperparameter refits finding no signal
#: (:attr:`FanovaResult.n_flat_refits`), the trials' differences may be noise and no
#: effect of the analysis is judged: every verdict is "uncertain"
#: (:attr:`FanovaResult.signal_doubtful`). Capped analyses of noisy optimizer samples
#: (``benchmarks/bench_calibration.py --cap 0.25``, 180 studies): effects above 0.05
#: called "indistinguishable from nothing" 137 -> 77, a half 106; real effects resolved
#: 332 -> 319 of 813.
NO_SIGNAL_SHARE = 0.25
#: No effect of an analysis is "resolved" unless its refits' median rank correlation
#: with the trials they were not fit on exceeds what values unrelated to the parameters
#: exceed with this probability (:attr:`FanovaResult.signal_unshown`).
UNSHOWN_LEVEL = 0.05
#: Fewer trials than this leave a GP's refits no half of at least three trials to be
#: checked on (``n - n // 2 > 2``): the model cannot show that it predicts anything, and
#: an analysis that asked for refits resolves no effect (:attr:`FanovaResult.signal_unshown`).
MIN_TRIALS_HELD_OUT = 5


@dataclass(frozen=True, slots=True)
class Importance:
    """Fraction of variance explained by one effect, over the draws of a model (GP posterior means or trees).

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it is one row of :meth:`FanovaResult.to_frame` and one
    bar of :meth:`FanovaResult.plot`.

    Attributes
    ----------
    params : tuple of str
        One name for a main effect, several for their pure interaction.
    mean, std : float
        Mean and standard deviation over non-constant draws; with ``hp.GP(refits=...)``
        the std also holds the spread over the hyperparameter refits.
    shadow : float or None
        The share a *shadow* column got: a copy of a parameter shuffled among trials
        close in trial order, so with the same marginal (also as the sampler moved it)
        and no bearing on the objective (Gaussian process; main effects and pairs).
    verdict : {"resolved", "uncertain", "indistinguishable from nothing", "negligible"}
        Read from the effect's 90 % :attr:`interval` against its *null*, the larger of
        ``shadow`` and ``regrown``:
        "indistinguishable from nothing" when the mean does not exceed the null or is
        below ``NEGLIGIBLE_SHARE`` (5e-4), the trials could not hide an effect of
        ``MATTERS_SHARE`` (``hidden``) and the interval's upper end stays below the null
        plus that share; "negligible" in the same case where the mean is below
        ``NEGLIGIBLE_SHARE`` but the interval's lower end clears the null: an effect the
        trials show, too small a share to count (every decision treats both as no
        effect, :data:`NO_EFFECT`, and weighs what fixing costs);
        "uncertain" when they could or it does not (the hyperparameters the trials
        support disagree about the effect: an interaction the model's own fit gives
        nothing, and a fit without its additive part most of the variance), or when the
        interval's lower end reaches the null (or 0 without shadows): the effect is
        above it, but the interval does not rule out that it is not; else "resolved".
        Every effect is "uncertain" where more than ``NO_SIGNAL_SHARE`` of the refits
        find no signal (:attr:`FanovaResult.signal_doubtful`), and none is "resolved"
        where the refits do not rank the trials they were not fit on better than values
        unrelated to the parameters would (:attr:`FanovaResult.signal_unshown`). A capped analysis calls
        an effect nothing only where the analysis of all trials of the same history
        does too (:meth:`FanovaResult.beside`); alone, none.
    regrown : float or None
        Interactions of two parameters that the Gaussian process would otherwise call
        resolved: the share the pair holds in the model fit again after the interaction,
        as fitted, was subtracted from every trial's value. A real interaction is gone
        from those values; one the model's product form makes up from two effects that
        act alone comes back (see ``hpinsight.surrogates.gp._removal``). None where the
        check was not made.
    hidden : float or None
        Main effects of the Gaussian process: the share an effect of the parameter could
        hold that these trials cannot rule out (where they leave its range unvisited, or
        their noise is large against them; see ``hpinsight.surrogates.gp._hidden``).
    before_pruning : float or None
        Effects of a parameter the Gaussian process took out of its fit
        (``hp.GP(prune=True)``: taking it out cost the likelihood less than the price of
        a parameter), so that their ``mean`` is 0: the share the fit gave them before. Its
        interval reaches from 0 to as far above this share as any interval reaches above
        its mean, and its verdict reads this share instead of the mean: being taken out
        is not evidence that it does nothing, so it is "indistinguishable from nothing"
        only where the fit before would say so too, and never "resolved". None for every
        other effect.

    Examples
    --------
    >>> from hpinsight.results import Importance
    >>> imp = Importance(("lr",), 0.62, 0.05)
    >>> imp
    Importance(lr: 0.6200 ± 0.0500)
    >>> print(imp)
    lr: 62.0 % ± 5.0 %, resolved
    >>> imp.to_dict()["params"]
    ['lr']
    """

    params: tuple[str, ...]
    mean: float
    std: float
    shadow: float | None = None
    verdict: str = "resolved"
    hidden: float | None = None
    regrown: float | None = None
    before_pruning: float | None = None

    @property
    def interval(self) -> tuple[float, float]:
        """The effect's ``INTERVAL_LEVEL`` (90 %) interval, ``mean ± INTERVAL_Z std`` within
        ``[0, 1]``: what its :attr:`verdict` reads. For a parameter taken
        out of the model, from 0 (its share in the model) to ``INTERVAL_Z std`` above
        :attr:`before_pruning` (its share in the fit before)."""
        if self.before_pruning is not None:
            return 0.0, _interval(self.before_pruning, self.std)[1]
        return _interval(self.mean, self.std)

    @property
    def judged_share(self) -> float:
        """The share the :attr:`interval` and the :attr:`verdict` read: the ``mean``, or
        for a parameter taken out of the model, :attr:`before_pruning`."""
        return self.mean if self.before_pruning is None else self.before_pruning

    @property
    def null(self) -> float | None:
        """What the effect is judged against: the larger of ``shadow`` and ``regrown``
        (None when neither was computed)."""
        known = [v for v in (self.shadow, self.regrown) if v is not None]
        return max(known) if known else None

    def __repr__(self) -> str:
        flag = "" if self.verdict == "resolved" else f", {self.verdict}"
        tail = f": {self.mean:.4f} ± {self.std:.4f}{flag})"
        head = "Importance("
        names = clip_text(self._label, REPR_WIDTH - len(head) - len(tail))
        return f"{head}{names}{tail}"

    def __str__(self) -> str:
        """The effect as every surface writes it: ``lr x optimizer: 36.6 % ± 8.7 %, resolved``."""
        return f"{self._label}: {fmt_share(self.mean)} ± {fmt_share(self.std)}, {self.verdict}"

    @property
    def _label(self) -> str:
        """The parameters joined by `` x ``; for :attr:`FanovaResult.unexplained_fraction`
        (no parameters), what it is: it printed as ``: 0.0 % ± 0.0 %, resolved``."""
        return " x ".join(self.params) if self.params else "interactions above max_order"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (a non-finite number becomes None)."""
        low, high = self.interval
        return {"params": list(self.params), "mean": json_value(self.mean),
                "std": json_value(self.std), "shadow": json_value(self.shadow),
                "low": json_value(low), "high": json_value(high),
                "verdict": self.verdict, "hidden": json_value(self.hidden),
                "regrown": json_value(self.regrown), "before_pruning": json_value(self.before_pruning)}


def verdict(mean: float, std: float, null: float | None, hidden: float | None = None) -> str:
    """The verdict of an effect (:attr:`Importance.verdict`), read from its interval
    (:attr:`Importance.interval`)."""
    low, high = _interval(mean, std)
    if mean < NEGLIGIBLE_SHARE or (null is not None and mean <= null):
        # nothing is claimed to be nothing where the trials could hide what matters, or
        # where its interval reaches what matters
        could_matter = (high > (null or 0.0) + MATTERS_SHARE
                        or (hidden is not None and hidden > MATTERS_SHARE))
        if could_matter:
            return VERDICTS[1]
        # told from nothing by its interval, but below the floor: say so, not "nothing"
        return VERDICTS[3] if mean > (null or 0.0) and low > (null or 0.0) else VERDICTS[2]
    return VERDICTS[1] if low <= (null or 0.0) else VERDICTS[0]


def _interval(mean: float, std: float) -> tuple[float, float]:
    """``mean ± INTERVAL_Z std`` within ``[0, 1]``: a share is never below 0 nor above the
    whole (the demo's learning_rate among the best read ``high: 1.088``)."""
    reach = INTERVAL_Z * std
    return max(mean - reach, 0.0), min(mean + reach, 1.0)


def _widened(std: Any, per_refit: NDArray[np.float64]) -> Any:
    """``std`` (over draws) widened by the variance over hyperparameter refits along axis
    0 (``ddof=1``): the law of total variance. ``std`` itself with fewer than two refits."""
    if per_refit.shape[0] < 2:
        return std
    return np.sqrt(std**2 + per_refit.var(axis=0, ddof=1))


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
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
    per_draw : ndarray of shape (n_draws, G1[, G2])
        Each draw's exact marginal at the grid points.
    mean, std : ndarray of shape (G1[, G2])
        Over draws (``ddof=0``); with ``hp.GP(refits=...)`` the std also holds the
        spread of the marginal over the hyperparameter refits, as the importances' does.
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
    >>> m = hp.fanova(hp.TrialHistory(space, configs, y), seed=0).marginal("k")
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
    per_draw: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    space: SearchSpace | None = field(default=None, repr=False, compare=False)
    cap_value: float | None = None

    def __repr__(self) -> str:
        shape = "x".join(str(len(g)) for g in self.grid)
        tail = (f", grid={shape}, draws={self.per_draw.shape[0]}, "
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


#: Attribute names of earlier releases, and the names that replaced them.
_RENAMED = {"n_trees": "n_draws", "tree_variances": "draw_variances",
            "tree_means": "draw_means", "valid_trees": "valid_draws",
            "n_constant_trees": "n_constant_draws", "oob_r2": "fit_r2",
            "null_fractions": "shadow_fractions", "null_fraction": "shadow_fraction"}


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class FanovaResult:
    """Functional ANOVA decomposition of a surrogate (Gaussian process or random forest)
    over a search space. "Draws" below are the GP's bootstrap posterior means or the
    forest's trees.

    Use :meth:`importance`, :meth:`ranking` and :meth:`marginal`; the raw
    per-draw numbers are kept so any summary can be recomputed without a refit.

    Attributes
    ----------
    space : SearchSpace
        The history's space, plus the conditions its trials imply for parameters that
        are inactive in some trials but have none (Optuna's define-by-run studies).
    subsets : tuple of tuple of str
        The effects computed: all subsets of size 1 to ``max_order``.
    variances : ndarray of shape (n_draws, n_subsets)
        ``V_U`` per draw (objective units squared).
    draw_variances : ndarray of shape (n_draws,)
        Total prediction variance ``V`` of each draw.
    draw_means : ndarray of shape (n_draws,)
        Mean prediction ``f_0`` of each draw.
    max_order : int
    n_trials : int
        Trials the forest was fit on.
    n_excluded : int
        Trials left out: by the adapter that built the history (not
        COMPLETE, non-finite value) plus those whose value was NaN or infinite.
    n_inactive : dict of str to int
        Per parameter, how many of the used trials had it inactive or missing.
    untried : dict of str to tuple
        Per categorical parameter active in some trial, its choices no trial took
        (absent where every choice was tried). The model knows nothing of them: its
        shares and costs are over the choices the trials took.
    unvaried : dict of str to value
        Per parameter the space lets vary, active in at least two trials and at one
        value in all of them: that value. The trials say nothing of its effect.
    cap_value : float or None
        The cap applied to the objective (Section 3.3), if any.
    cap_quantile : float or None
    direction : {"minimize", "maximize"}
    fit_r2 : float or None
        Out-of-sample R² of the surrogate: out-of-bag for a forest hpinsight fit
        with a bootstrap, leave-one-out for the Gaussian process.
    seed : int or None
    model : FittedForest or FittedGP
        The fitted model; ``model.predict_per_draw(X)`` gives each draw's
        draw's) prediction at encoded configurations.
    surrogate : GP, Forest or a fitted model
        The model object the analysis was asked for (``surrogate.kind`` is "gp" or
        "forest"), or the fitted model that was given.
    shadow_fractions : (float, float) or None
        The share of the largest shadow main effect and of the largest shadow
        interaction (see :attr:`Importance.shadow`); None for a forest.
    refit_fractions : ndarray of shape (n_refits, n_subsets) or None
        Every effect's share under each hyperparameter refit (``hp.GP(refits=...)``;
        NaN where a refit finds no signal, :attr:`n_flat_refits`); None without refits.
    regrown_fractions : ndarray of shape (n_subsets,) or None
        Per effect, :attr:`Importance.regrown` (NaN where the check was not made); None
        without it (a forest, or a GP without shadows).
    hidden_fractions : ndarray of shape (n_params,) or None
        Per parameter (the space's order), the share an effect of it could hold that the
        trials cannot rule out (:attr:`Importance.hidden`); None for a forest, and for a
        capped analysis: capping makes the objective flat over most of the space, so any
        effect is large against the little variance left, and the question is the
        uncapped analysis's.
    pruned_fractions : ndarray of shape (n_subsets,) or None
        Per effect with a parameter the Gaussian process took out of its fit, the share
        the fit gave the effect before (:attr:`Importance.before_pruning`); NaN for the
        others. None where no parameter was taken out.
    nothing_over_all : frozenset of frozenset of str, or None
        A capped analysis judged :meth:`beside` the analysis of all trials: the effects
        that analysis calls "indistinguishable from nothing". Only these can be nothing
        here; without it (None) a capped analysis calls no effect nothing.
    objective_name : str
        What was analysed (:attr:`TrialHistory.objective_name`): ``"objective"``, one
        objective of a multi-objective study by its name, or, for its Pareto front,
        ``"share of trials dominating it"``.
    """

    space: SearchSpace
    subsets: tuple[tuple[str, ...], ...]
    variances: NDArray[np.float64]
    draw_variances: NDArray[np.float64]
    draw_means: NDArray[np.float64]
    max_order: int
    n_trials: int
    n_excluded: int
    n_inactive: dict[str, int]
    cap_value: float | None
    cap_quantile: float | None
    direction: str
    fit_r2: float | None
    seed: int | None
    model: FittedForest | FittedGP = field(repr=False)
    surrogate: GP | Forest | FittedForest | FittedGP
    shadow_fractions: tuple[float, float] | None = None
    refit_fractions: NDArray[np.float64] | None = field(default=None, repr=False)
    objective_name: str = "objective"
    hidden_fractions: NDArray[np.float64] | None = field(default=None, repr=False)
    regrown_fractions: NDArray[np.float64] | None = field(default=None, repr=False)
    pruned_fractions: NDArray[np.float64] | None = field(default=None, repr=False)
    untried: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    unvaried: dict[str, Any] = field(default_factory=dict)
    nothing_over_all: frozenset[frozenset[str]] | None = field(default=None, repr=False)
    _index: dict[frozenset[str], int] = field(init=False, repr=False, compare=False)
    _fractions: NDArray[np.float64] = field(init=False, repr=False, compare=False)
    _n_flat_refits: int = field(init=False, repr=False, compare=False)
    _held_out: tuple[float, float] | None = field(init=False, repr=False, compare=False)
    _summaries: tuple[Importance, ...] | None = field(init=False, repr=False, compare=False)
    _ranked: tuple[Importance, ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {frozenset(s): i for i, s in enumerate(self.subsets)})
        with np.errstate(divide="ignore", invalid="ignore"):
            fractions = self.variances / self.draw_variances[:, None]
        fractions[~(self.draw_variances > 0)] = np.nan
        object.__setattr__(self, "_fractions", readonly(fractions))
        # counted once: every effect's verdict reads it (signal_doubtful)
        shares = self.refit_fractions
        flat = 0 if shares is None or not shares.shape[1] else int(np.isnan(shares).all(axis=1).sum())
        object.__setattr__(self, "_n_flat_refits", flat)
        # the refits' median held-out rank correlation, a flat refit's 0 (it predicts the
        # mean), from the model's refits, one per row of shares (a result whose model was
        # replaced by one without them has none)
        flat_rows = [bool(row.size) and bool(np.isnan(row).all()) for row in (() if shares is None else shares)]
        refit_models = getattr(self.model, "refits", ())
        ranks = ([getattr(m, "held_out_rank", None) for m in refit_models] if len(refit_models) == len(flat_rows)
                 else [])
        sizes = {getattr(m, "held_out_size", None) for m in refit_models}
        size = sizes.pop() if len(sizes) == 1 else None
        shown = None
        if ranks and None not in ranks and size is not None and size > 2:
            median = float(np.median([0.0 if is_flat else r for r, is_flat in zip(ranks, flat_rows, strict=True)]))
            shown = (median, NormalDist().inv_cdf(1.0 - UNSHOWN_LEVEL) / math.sqrt(size - 1))
        elif (isinstance(self.surrogate, GP) and self.surrogate.refits
              and self.n_trials < MIN_TRIALS_HELD_OUT):
            # refits asked for, but too few trials to hold any out: nothing is shown (on
            # 2 and 3 trials effects came out "resolved", with a leave-one-out R² of 0)
            shown = (math.nan, math.nan)
        object.__setattr__(self, "_held_out", shown)
        # every effect summarized once, when first asked for all (ranking()): the
        # summaries in the order of `subsets`, and sorted
        object.__setattr__(self, "_summaries", None)
        object.__setattr__(self, "_ranked", None)

    # -- summaries ----------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name in _RENAMED:
            raise AttributeError(f"FanovaResult.{name} is now FanovaResult.{_RENAMED[name]}")
        raise AttributeError(f"'FanovaResult' object has no attribute {name!r}")

    @property
    def n_draws(self) -> int:
        """Number of draws: GP posterior means, or trees of the forest."""
        return int(self.draw_variances.size)

    @property
    def valid_draws(self) -> NDArray[np.bool_]:
        """Draws with positive prediction variance (the ones fractions are averaged over)."""
        return self.draw_variances > 0

    @property
    def n_constant_draws(self) -> int:
        """Draws whose prediction is constant over the space (left out of fractions)."""
        return int(self.n_draws - self.valid_draws.sum())

    @property
    def n_refits(self) -> int:
        """Hyperparameter refits of a Gaussian process (``hp.GP(refits=...)``; 0 without)."""
        return 0 if self.refit_fractions is None else int(self.refit_fractions.shape[0])

    @property
    def n_flat_refits(self) -> int:
        """Refits that find no signal: their prediction varies by at most ``FLAT_REFIT``
        (1e-3) of the model's variance, or not at all. Their shares are NaN and no spread
        holds them; more than a quarter of them flat says the trials' differences may be
        noise (:attr:`signal_doubtful`)."""
        return self._n_flat_refits

    @property
    def signal_doubtful(self) -> bool:
        """True when more than ``NO_SIGNAL_SHARE`` of the refits find no signal
        (:attr:`n_flat_refits`): the trials' differences may be noise, and every effect's
        verdict is "uncertain"."""
        return self.n_flat_refits > NO_SIGNAL_SHARE * self.n_refits

    @property
    def held_out_rank(self) -> float | None:
        """The median over the GP's hyperparameter refits (see ``n_refits``) of the rank
        correlation between a refit's prediction of the trials it was not fit on, given
        the half it was fit on, and those trials' values (a flat refit's counts as 0).
        None without refits; NaN where refits were asked for but the trials are too few
        to hold any out (fewer than ``MIN_TRIALS_HELD_OUT``). On a model that predicts,
        well above :attr:`held_out_bound`; on noise, whatever the fit found in the half
        it saw, about 0 (``benchmarks/README.md``, *Where the noise goes*)."""
        return None if self._held_out is None else self._held_out[0]

    @property
    def held_out_bound(self) -> float | None:
        """What :attr:`held_out_rank` must exceed for this analysis to resolve an effect:
        the correlation that values unrelated to the parameters exceed with probability
        ``UNSHOWN_LEVEL`` (``z / sqrt(m - 1)`` for ``m`` held-out trials: 0.31 at 60
        trials, 0.17 at 200). None without refits; NaN where the trials are too few to
        hold any out (fewer than ``MIN_TRIALS_HELD_OUT``)."""
        return None if self._held_out is None else self._held_out[1]

    @property
    def signal_unshown(self) -> bool:
        """True when :attr:`held_out_rank` is not above :attr:`held_out_bound`: the model
        has not shown that it predicts the trials it was not fit on, so no effect of
        this analysis is "resolved" (one whose interval clears its null is "uncertain").
        Also True where refits were asked for but the trials are too few to hold any
        out (:attr:`held_out_rank` NaN), and for a forest whose out-of-bag R²
        (:attr:`fit_r2`) is not above 0: it predicts the trials its trees did not see no
        better than their mean (on pure noise, 9 of 50 main effects were "resolved").
        Its "nothing" verdicts stand: they rest on the effect's upper end, which noise
        only widens."""
        if self.model.kind == "forest" and self.fit_r2 is not None and not self.fit_r2 > 0:
            return True
        return self._held_out is not None and not self._held_out[0] > self._held_out[1]

    @property
    def is_constant(self) -> bool:
        """True when every draw is constant: the objective shows no variation to explain."""
        return not bool(self.valid_draws.any())

    @property
    def fractions(self) -> NDArray[np.float64]:
        """``F_U = V_U / V`` per draw, shape (n_draws, n_subsets); NaN rows for constant
        draws. Computed once (read-only)."""
        return self._fractions

    @property
    def total_variance(self) -> float:
        """Mean over draws of the prediction variance ``V`` over the space (Eq. 5)."""
        return float(self.draw_variances.mean())

    @property
    def unexplained_fraction(self) -> Importance:
        """Share of variance in interactions of order above ``max_order`` (mean, std)."""
        refits = (None if self.refit_fractions is None
                  else 1.0 - np.nansum(self.refit_fractions, axis=1))
        return self._summarize((), 1.0 - np.nansum(self.fractions, axis=1), refits)

    def shadow_fraction(self, order: int) -> float | None:
        """The share of the largest shadow effect of this order (1 or 2); None without
        shadows (a forest) or for higher orders."""
        if self.shadow_fractions is None or order not in (1, 2):
            return None
        return self.shadow_fractions[order - 1]

    def _refits(self, i: int) -> NDArray[np.float64] | None:
        return None if self.refit_fractions is None else self.refit_fractions[:, i]

    def _summarize(self, params: tuple[str, ...], per_draw: NDArray[np.float64],
                   refits: NDArray[np.float64] | None = None, regrown: float | None = None) -> Importance:
        """Mean and std over the valid draws; with ``refits`` (the effect's share under
        each hyperparameter refit) the std also holds their variance: the law of total
        variance, the draws' spread given the hyperparameters plus the spread of the
        share over the hyperparameters."""
        valid = self.valid_draws
        shadow = self.shadow_fraction(len(params)) if params else None
        hidden = self._hidden(params)
        before = self._before_pruning(params)
        if not valid.any():  # a constant objective: nothing to explain
            # (or a forest that did not follow values that vary: nothing shown, and nothing
            # ruled out either)
            said = VERDICTS[1] if self.model.kind == "forest" and self.signal_unshown \
                else VERDICTS[2]
            flat = said if not params else self._among_best(params, said)
            return Importance(params, 0.0, 0.0, shadow, flat, hidden, regrown, before)
        vals = per_draw[valid]
        mean, std = float(vals.mean()), float(vals.std())
        if refits is not None:
            std = float(_widened(np.float64(std), refits[np.isfinite(refits)]))
        imp = Importance(params, mean, std, shadow, VERDICTS[0], hidden, regrown, before)
        if not params:  # the interactions above max_order: read from its interval alone
            return replace(imp, verdict=verdict(float(imp.mean), float(imp.std), None))
        judged = VERDICTS[1] if self.signal_doubtful else verdict(imp.judged_share, std, imp.null, hidden)
        if judged == VERDICTS[0] and (self.signal_unshown or before is not None):
            judged = VERDICTS[1]
        if judged == VERDICTS[3] and before is not None:
            # taken out of the model: its interval starts at 0, so no effect is shown
            judged = VERDICTS[2]
        return replace(imp, verdict=self._among_best(params, judged))

    def _among_best(self, params: tuple[str, ...], judged: str) -> str:
        """A capped analysis calls an effect nothing only where the analysis of all
        trials does too (:meth:`beside`); elsewhere "nothing" is "uncertain"."""
        if judged in NO_EFFECT and self.cap_value is not None \
                and frozenset(params) not in (self.nothing_over_all or ()):
            return VERDICTS[1]
        return judged

    def _regrown(self, i: int) -> float | None:
        """Subset ``i``'s :attr:`Importance.regrown` (None where it was not checked)."""
        if self.regrown_fractions is None or not np.isfinite(self.regrown_fractions[i]):
            return None
        return float(self.regrown_fractions[i])

    def _before_pruning(self, params: tuple[str, ...]) -> float | None:
        """An effect's :attr:`Importance.before_pruning` (None where none of its
        parameters was taken out)."""
        if self.pruned_fractions is None or not params:
            return None
        b = float(self.pruned_fractions[self._index[frozenset(params)]])
        return b if not math.isnan(b) else None

    def _hidden(self, params: tuple[str, ...]) -> float | None:
        """A main effect's :attr:`Importance.hidden` (None for other effects, or without it)."""
        if self.hidden_fractions is None or len(params) != 1:
            return None
        h = float(self.hidden_fractions[self.space.names.index(params[0])])
        return h if np.isfinite(h) else None

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
        if self._summaries is not None:  # summarized already (ranking()): the same object
            return self._summaries[i]
        return self._summarize(self.subsets[i], self.fractions[:, i], self._refits(i), self._regrown(i))

    def ranking(self, order: int | None = None) -> tuple[Importance, ...]:
        """Effects sorted by mean fraction, largest first.

        Parameters
        ----------
        order : int, optional
            Only effects of this many parameters (1 = main effects). Default: all.
        """
        ranked = self._ranked
        if ranked is None:  # the result is immutable: its effects are summarized once
            summaries = tuple(self._summarize(s, self._fractions[:, i], self._refits(i), self._regrown(i))
                              for i, s in enumerate(self.subsets))
            ranked = tuple(sorted(summaries, key=lambda imp: (-imp.mean, imp.params)))
            object.__setattr__(self, "_summaries", summaries)
            object.__setattr__(self, "_ranked", ranked)
        return ranked if order is None else tuple(i for i in ranked if len(i.params) == order)

    def beside(self, all_trials: FanovaResult) -> FanovaResult:
        """This capped analysis, judged beside the analysis of all trials of the same
        history: an effect is "indistinguishable from nothing" among the best only where
        it is over all trials too.

        The capped objective is flat over most of the space, and the few trials in the
        good part leave an effect there hard to tell from nothing: alone, a capped
        analysis calls no effect nothing. Where all trials show no effect of a
        parameter, it has none among the best to show either; where they show one,
        absence among the best is not shown, and the verdict is "uncertain". On 180
        optimizer studies with noise (``benchmarks/bench_calibration.py --cap 0.25``)
        main effects above 0.05 among the best called nothing go from 28 of 353 to none,
        and verdicts that flip with the analysis seed from 14.1 to 9.1 % (see
        ``benchmarks/README.md``).

        Parameters
        ----------
        all_trials : FanovaResult
            ``fanova(history)`` of the history this analysis capped.

        Returns
        -------
        FanovaResult
            A copy with :attr:`nothing_over_all` set; its numbers are this analysis's.

        Raises
        ------
        InvalidArgumentError
            If this analysis is not capped, or ``all_trials`` is.
        InvalidDataError
            If ``all_trials`` is of other trials, parameters, objective or direction.
        """
        if not isinstance(all_trials, FanovaResult):
            raise InvalidArgumentTypeError(
                "FanovaResult.beside takes the FanovaResult of all trials (hp.fanova(history)); "
                f"got {type(all_trials).__name__}.")
        if self.cap_value is None:
            raise InvalidArgumentError(
                "FanovaResult.beside judges a capped analysis (fanova(..., cap_quantile=q)); "
                "this one is not capped.")
        if all_trials.cap_value is not None:
            raise InvalidArgumentError(
                "FanovaResult.beside needs the analysis of all trials, uncapped; the one given "
                f"was capped at {all_trials.cap_value:g}. Pass fanova(history).")
        if (differ := other_history(all_trials, self)) is not None:
            raise InvalidDataError(
                f"FanovaResult.beside: this analysis is of {differ[1]}, the one given of "
                f"{differ[0]}; pass the analysis of the same history.")
        nothing = frozenset(frozenset(i.params) for i in all_trials.ranking()
                            if i.verdict in NO_EFFECT)
        return replace(self, nothing_over_all=nothing)

    # -- marginals ------------------------------------------------------------------------
    def marginal(self, *names: str, grid_size: int = 100) -> MarginalResult:
        """Exact marginal prediction of one or two parameters (Eq. 1), per draw.

        Parameters
        ----------
        *names : str
            One or two parameter names.
        grid_size : int, default=100
            Points per continuous parameter (evenly spaced in the encoded
            coordinate, i.e. log-spaced for ``log=True``). Numerical discrete
            parameters use all their values, thinned to ``grid_size`` when there
            are more; categoricals use all their choices.

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
        per_draw = np.empty((self.n_draws, *[e.size for e in enc]))
        if isinstance(self.model, FittedGP):
            per_draw[...] = self.model.marginal_per_draw(cols, enc)
        else:
            for t, tree in enumerate(self.model.trees):
                part = compute_partition(tree, measures)
                a = marginal_grid(part, cols) if part.value.size else np.full([1] * len(cols), part.mean)
                cells = [part.cells_of(c, e) if part.value.size else np.zeros(e.size, np.intp) for c, e in zip(cols, enc, strict=True)]
                per_draw[t] = a[np.ix_(*cells)]
        std = per_draw.std(axis=0)
        if isinstance(self.model, FittedGP) and self.model.refits:
            # as for the importances: the draws' spread plus the refits'
            std = _widened(std, np.concatenate([m.marginal_per_draw(cols, enc) for m in self.model.refits]))
        return MarginalResult(
            params=tuple(names),
            grid=tuple(native_grid(self.space, c, e) for c, e in zip(cols, enc, strict=True)),
            encoded_grid=tuple(readonly(e) for e in enc),
            per_draw=readonly(per_draw),
            mean=readonly(per_draw.mean(axis=0)),
            std=readonly(std),
            space=self.space,
            cap_value=self.cap_value,
        )

    # -- export ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        tops = [(i.params[0], f"={i.mean:.3f}") for i in self.ranking(order=1)[:3]]
        flag = ", constant objective" if self.is_constant else ""
        head = (f"FanovaResult(n_trials={self.n_trials}, surrogate={self.surrogate.kind!r}, "
                f"n_draws={self.n_draws}, max_order={self.max_order}, top=[")
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
            "n_draws": self.n_draws,
            "n_constant_draws": self.n_constant_draws,
            "n_refits": self.n_refits,
            "n_flat_refits": self.n_flat_refits,
            "signal_doubtful": self.signal_doubtful,
            "held_out_rank": json_value(self.held_out_rank),
            "held_out_bound": json_value(self.held_out_bound),
            "signal_unshown": self.signal_unshown,
            "nothing_over_all": None if self.nothing_over_all is None else sorted(
                ([n for n in self.space.names if n in key] for key in self.nothing_over_all),
                key=lambda names: (len(names), [self.space.index(n) for n in names])),
            "is_constant": self.is_constant,
            "n_trials": self.n_trials,
            "n_excluded": self.n_excluded,
            "n_inactive": dict(self.n_inactive),
            "untried": {n: [json_value(c) for c in cs] for n, cs in self.untried.items()},
            "unvaried": {n: json_value(v) for n, v in self.unvaried.items()},
            "cap_value": json_value(self.cap_value),
            "cap_quantile": self.cap_quantile,
            "direction": self.direction,
            "objective": self.objective_name,
            "fit_r2": json_value(self.fit_r2),
            "seed": self.seed,
            "surrogate": describe(self.surrogate),
        }

    def to_frame(self) -> Any:
        """``pandas.DataFrame`` with one row per effect: params, order, mean, std, low,
        high, shadow, regrown, verdict (the columns of :class:`Importance`, ``low`` and
        ``high`` its :attr:`~Importance.interval`; ``regrown`` is None where the
        interaction was not checked).

        Rows are the :class:`Importance` objects of :meth:`ranking`, largest first;
        ``params`` joins an interaction's names with ``" x "``.
        """
        pd = import_optional("pandas", "FanovaResult.to_frame")
        columns = ["params", "order", "mean", "std", "low", "high", "shadow", "regrown", "verdict"]
        rows = [(" x ".join(i.params), len(i.params), i.mean, i.std, *i.interval, i.shadow,
                 i.regrown, i.verdict) for i in self.ranking()]
        return pd.DataFrame(rows, columns=columns)

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
        >>> result = hp.fanova(hp.TrialHistory(space, configs, [c["x"] for c in configs]), seed=0)
        >>> ax = result.plot(ax=Figure().add_subplot(), top=1)
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['x']
        """
        from .plotting import plot_importance

        return plot_importance(self, ax=ax, **kwargs)


def among_best_label(capped: FanovaResult | None) -> str:
    """How every surface names where a capped analysis looks: "among the best 25 %"
    (its ``cap_quantile``), or "among the best trials" where it was capped at a value."""
    q = None if capped is None else capped.cap_quantile
    return "among the best trials" if q is None else f"among the best {100 * q:g} %"


def other_history(result: FanovaResult, of: FanovaResult | TrialHistory) -> tuple[str, str] | None:
    """Whether ``result`` analyses another history than ``of`` (a history, or an analysis
    of one): None when both have the same number of trials, parameter names, objective
    and direction; else each of the two described in words, to name both in an error."""
    def said(x: FanovaResult | TrialHistory) -> str:
        return (f"{x.n_trials} trials of {list(x.space.names)} ({x.direction} "
                f"{x.objective_name!r})")

    if (result.n_trials, result.space.names, result.objective_name, result.direction) == (
            of.n_trials, of.space.names, of.objective_name, of.direction):
        return None
    return said(result), said(of)
