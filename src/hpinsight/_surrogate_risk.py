"""What fixing a parameter costs, on one study's surrogate: tuning risk (Weerts 2018,
Eq. 4) by a paired random search on every draw of the model (see ``_subspace`` for
how :func:`hpinsight.suggest_subspace` uses it), and the defaults it fixes at."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from ._defaults import DefaultValues
from ._fanova_result import FanovaResult
from ._history import TrialHistory
from ._shared import REPR_WIDTH, clip_text, fmt_value, json_value, readonly
from ._validation import check_int, check_seed
from .exceptions import InvalidArgumentError, InvalidArgumentTypeError, InvalidDataError
from .space import (
    Categorical,
    Float,
    Int,
    SearchSpace,
    active_mask,
    encode_value,
    measure_of,
    native_value,
    snap,
)
from .surrogates import predict_fixing
from .surrogates.forest import impute_inactive
from .surrogates.gp import FittedGP
from .surrogates.gp._model import with_column
from .surrogates.gp._parallel import two_at_a_time

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SurrogateRisk", "best_candidate", "candidates", "config_at", "defaults_for",
           "midpoint", "surrogate_tuning_risk"]


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class SurrogateRisk:
    """Predicted cost of fixing one parameter at its default (see :func:`surrogate_tuning_risk`).

    A value object: it has a ``repr`` and :meth:`to_dict` but no ``to_frame`` or
    ``plot`` of its own, because it is one row of :meth:`SubspaceResult.to_frame`
    (``risk_mean``, ``risk_std``) and one cost bar of :meth:`SubspaceResult.plot`.

    Attributes
    ----------
    param : str
    default : value
    mean, std : float
        Over trees (or draws) of ``per_draw``, in objective units, oriented so that
        positive means worse (for a maximized objective, the score lost). For a Gaussian
        process ``std`` includes ``posterior_sd``, and with ``hp.GP(refits=...)`` the
        variance of ``per_refit`` (``ddof=1``) as well.
    quantiles : dict of float to float
        Quantiles of the risk (0.5, 0.9, 0.95): of the per-tree risks, or for a Gaussian
        process of the draws' risks each widened by the posterior uncertainty (a mixture
        of normals); with refits, each draw's risk is also shifted by every refit's
        deviation from the refits' mean (scaled to their ``ddof=1`` variance), so the
        mixture's variance is ``std**2``.
    per_draw : ndarray of shape (n_draws,)
        Each tree's (or draw's) best prediction with the parameter fixed minus its best
        with everything free, both over the same paired candidates (the free best is the
        better of both, so none is negative).
    best_fixed, best_free : dict
        The configurations the search found on the model's mean prediction.
    posterior_sd : float
        A Gaussian process's posterior standard deviation of the difference between its
        best free configuration with the parameter fixed and without
        (:meth:`FittedGP.difference_sd`); 0 for a forest, whose trees
        carry their spread themselves.
    per_refit : ndarray of shape (n_refits,)
        The same risk under each of a Gaussian process's hyperparameter refits
        (``hp.GP(refits=...)``), over the same candidates; empty without refits.

    Examples
    --------
    >>> import numpy as np
    >>> from hpinsight.results import SurrogateRisk
    >>> risk = SurrogateRisk("lr", 0.01, 0.25, 0.05, {0.9: 0.31}, np.array([0.2, 0.3]),
    ...                      {"lr": 0.01}, {"lr": 0.003})
    >>> risk
    SurrogateRisk(lr at 0.01: 0.25 ± 0.05, q90=0.31)
    """

    param: str
    default: Any
    mean: float
    std: float
    quantiles: dict[float, float]
    per_draw: NDArray[np.float64] = field(repr=False)
    best_fixed: dict[str, Any] = field(repr=False)
    best_free: dict[str, Any] = field(repr=False)
    posterior_sd: float = 0.0
    per_refit: NDArray[np.float64] = field(default_factory=lambda: readonly(np.empty(0)), repr=False)

    def __repr__(self) -> str:
        q90 = self.quantiles.get(0.9)
        tail = f": {self.mean:.4g} ± {self.std:.4g}{'' if q90 is None else f', q90={q90:.4g}'})"
        head = "SurrogateRisk("
        where = f"{self.param} at {fmt_value(self.default, quote=True)}"
        return f"{head}{clip_text(where, REPR_WIDTH - len(head) - len(tail))}{tail}"

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of the risk (see ``quantiles``)."""
        return _mixture_quantile(_with_refits(self.per_draw, self.per_refit), self.posterior_sd, q)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {
            "param": self.param, "default": json_value(self.default),
            "mean": json_value(self.mean), "std": json_value(self.std),
            "quantiles": {str(k): json_value(v) for k, v in self.quantiles.items()},
            "best_fixed": {k: json_value(v) for k, v in self.best_fixed.items()},
            "best_free": {k: json_value(v) for k, v in self.best_free.items()},
            "posterior_sd": json_value(self.posterior_sd),
            "per_refit": [json_value(v) for v in self.per_refit],
        }


def _with_refits(per_draw: NDArray[np.float64], per_refit: NDArray[np.float64]) -> NDArray[np.float64]:
    """Every draw's risk shifted by every refit's deviation from the refits' mean, scaled
    so the shifts' variance is the refits' ``ddof=1`` variance: the law of total variance
    the importances' std follows. ``per_draw`` itself with fewer than two refits."""
    if per_refit.size < 2:
        return per_draw
    shifts = (per_refit - per_refit.mean()) * math.sqrt(per_refit.size / (per_refit.size - 1))
    out: NDArray[np.float64] = (per_draw[:, None] + shifts[None, :]).ravel()
    return out


def _mixture_quantile(values: NDArray[np.float64], sd: float, q: float) -> float:
    """The ``q`` quantile of ``values``, each widened by a normal of standard deviation
    ``sd`` (an equal-weight mixture); of ``values`` themselves when ``sd`` is 0."""
    if not sd > 0:
        return float(np.quantile(values, q))
    lo, hi = float(values.min()) - 10.0 * sd, float(values.max()) + 10.0 * sd
    # to 1e-9 of the spread, on any scale (an absolute 1e-12 was more than the margin of
    # an objective on a 1e-9 scale, and its decisions flipped)
    return float(brentq(lambda t: float(ndtr((t - values) / sd).mean()) - q, lo, hi, xtol=1e-9 * sd))


def surrogate_tuning_risk(
    result: FanovaResult,
    defaults: Mapping[str, Any] | DefaultValues,
    *,
    configs: Sequence[Mapping[str, Any]] = (),
    n_candidates: int = 2000,
    seed: int | None = None,
) -> dict[str, SurrogateRisk]:
    """Predicted tuning risk of each parameter in ``defaults``, from one study's surrogate.

    Parameters
    ----------
    result : FanovaResult
        A fANOVA result whose model was fit on the raw (uncapped) objective.
    defaults : mapping of str to value, or DefaultValues
        The value each parameter would be fixed at (a :class:`DefaultValues` gives its
        ``values``); parameters not named are not assessed.
    configs : sequence of mapping, optional
        Configurations to add to the random candidates (typically the study's trials).
    n_candidates : int, default=2000
        Random configurations drawn from the space's measure.
    seed : int, optional

    Returns
    -------
    dict of str to SurrogateRisk

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("noise", 0, 1)])
    >>> configs = space.sample(200, seed=0)
    >>> y = [(c["x"] - 0.3) ** 2 for c in configs]
    >>> result = hp.fanova(hp.TrialHistory(space, configs, y), seed=0)
    >>> risks = hp.surrogate_tuning_risk(result, {"x": 0.9, "noise": 0.5}, seed=0)
    >>> risks["x"].mean > 0.2 > risks["noise"].mean
    True
    """
    func = "surrogate_tuning_risk"
    if not isinstance(result, FanovaResult):
        raise InvalidArgumentTypeError(f"{func} needs a FanovaResult (from hpinsight.fanova); got "
                        f"{type(result).__name__}.")
    if result.cap_value is not None:
        # a capped objective is flat wherever the objective is worse than the cap, so
        # the loss of fixing a parameter comes out as a fraction of the true one
        raise InvalidArgumentError(
            f"{func} needs the analysis of the objective itself, fanova(history); the one "
            f"given was capped at {result.cap_value:g}, where every worse value counts as "
            "the cap, so the cost of fixing a parameter would come out smaller than it is. "
            "Pass hp.fanova(history) without cap_quantile= or cap_value=.")
    given: Any = defaults  # typed a mapping; anything with .items() reads as one
    at: Mapping[str, Any]  # the values, whatever form they came in
    if isinstance(given, DefaultValues):  # hp.default_values(...), as suggest_subspace takes it
        at = dict(given.values)
    elif isinstance(given, Mapping):
        at = given
    elif callable(getattr(given, "items", None)):
        at = dict(given.items())  # e.g. a pandas Series of a trial's values (a copy)
    else:
        raise InvalidArgumentTypeError(
            f"The 'defaults' parameter of {func} must be a mapping of parameter names to the "
            f"values to fix them at, e.g. {{'lr': 0.01}}. Got {type(given).__name__} instead "
            "(hp.suggest_subspace chooses the values itself: declared defaults, else the best "
            "trial's).")
    n_candidates = check_int(n_candidates, "n_candidates", func, minimum=1)
    seed = check_seed(seed, func)
    space = result.space
    rng = np.random.default_rng(seed)
    X = candidates(space, configs, n_candidates, rng)
    sign = 1.0 if result.direction == "minimize" else -1.0
    index = {name: space.index(name) for name in at}  # an unknown name: the space's error
    check_default_values(space, at, func, fix="or leave the parameter out")
    cols = {name: (j, encode_value(space.params[j], at[name])) for name, j in index.items()}
    fixes = list(cols.values())
    free_pred, *fixed = (P * sign for P in predict_fixing(result.model, X, fixes, free=True))
    # the free optimum, refined from the best candidate one parameter at a time: random
    # candidates seldom hold a value near its best in every parameter at once, and a free
    # optimum found short of the best undercounts every cost of fixing (a cost of 0.1 e
    # on [0, 3], fixed at 0.2, came out at -0.002 against the true 0.02). Its points join
    # the candidates, predicted free and fixed as they are
    start = _best_row(free_pred)
    R = refined_optima(result, X[start], float(free_pred[:, start].mean()), sign)
    if len(R):
        more_free, *more_fixed = (P * sign for P in predict_fixing(result.model, R, fixes,
                                                                  free=True))
        X = np.vstack([X, R])
        free_pred = np.hstack([free_pred, more_free])
        fixed = [np.hstack([P, Q]) for P, Q in zip(fixed, more_fixed, strict=True)]
    k_free = _best_row(free_pred)
    fixed_preds = dict(zip(cols, fixed, strict=True))
    # free and fixed searches over equally many paired candidates, so both optima carry
    # the same winner's-curse bias (a pool with every fixed variant in it would favour
    # the free side by its size alone)
    best_free = config_at(space, X[k_free])
    chosen = {name: int(np.argmin(P.mean(axis=0))) for name, P in fixed_preds.items()}
    sds = dict.fromkeys(fixed_preds, 0.0)
    if isinstance(result.model, FittedGP) and fixed_preds:
        # the uncertainty of moving this one parameter away from the predicted optimum:
        # the best free candidate against itself with the parameter fixed (two unrelated
        # optima would differ in every parameter, and their difference says nothing of it)
        A = np.repeat(X[[k_free]], len(fixed_preds), 0)
        for row, (j, v) in enumerate(cols[name] for name in fixed_preds):
            A[row, j] = v
        sds = dict(zip(fixed_preds, map(float, result.model.difference_sd(A, np.repeat(X[[k_free]], len(A), 0))),
                       strict=True))
    refits = result.model.refits if isinstance(result.model, FittedGP) else ()
    # each refit's risk on the same candidates: its hyperparameters' share of the spread
    # per refit: its prediction at the candidates, then with each parameter fixed
    # (independent: two at a time; the demo's eleven 0.48 -> 0.33 s, the same bits)
    refit_free, refit_fixed = [], []
    for unchanged, *each in two_at_a_time(lambda m: m.predict_fixing(X, fixes, free=True), refits):
        refit_free.append(unchanged[0] * sign)
        refit_fixed.append(each)
    out = {}
    for i, (name, P) in enumerate(fixed_preds.items()):
        k = chosen[name]
        # each draw's own optima: how much worse its best is with the parameter fixed;
        # where the draws disagree on the optimum, fixing is uncertain, and this says so.
        # A configuration with it fixed is one of the free space too, so the free optimum
        # is the better of both and no cost is negative (a fixed value that beat every free
        # candidate said "fixing gains 0.017")
        fixed_best = P.min(axis=1)
        per_draw = fixed_best - np.minimum(free_pred.min(axis=1), fixed_best)
        per_refit = np.array([float(max((each[i][0] * sign).min() - free.min(), 0.0))
                              for each, free in zip(refit_fixed, refit_free, strict=True)])
        spread = float(per_refit.var(ddof=1)) if per_refit.size >= 2 else 0.0
        sd = sds[name]
        mixed = _with_refits(per_draw, per_refit)
        out[name] = SurrogateRisk(
            param=name, default=at[name], mean=float(per_draw.mean()),
            std=float(math.sqrt(per_draw.var() + spread + sd**2)),
            quantiles={q: _mixture_quantile(mixed, sd, q) for q in (0.5, 0.9, 0.95)},
            per_draw=readonly(per_draw), best_fixed=config_at(space, with_column(X[k], *cols[name])),
            best_free=best_free, posterior_sd=sd, per_refit=readonly(per_refit),
        )
    return out


#: Rounds of :func:`refined_optima`, and its grid's points per continuous parameter.
REFINE_ROUNDS = 3
REFINE_GRID = 33


def refined_optima(result: FanovaResult, start: NDArray[np.float64], now: float,
                   sign: float) -> NDArray[np.float64]:
    """The points a coordinate search on the model's mean prediction (signed so lower is
    better) visits from the encoded row ``start``, whose mean prediction is ``now``: in
    each of ``REFINE_ROUNDS`` rounds, every parameter is swept over its grid
    (``REFINE_GRID`` points, or every value it can take) with the others held, and the
    search moves to the best of the point with every parameter at its best value and the
    best single move. An additive model's optimum
    is found in one round, where random candidates seldom hold a good value of every
    parameter at once. Shape ``(k, n_columns)``, ``k <= REFINE_ROUNDS``."""
    space = result.space
    grids = [snap(p, measure_of(p).grid(REFINE_GRID)) for p in space.params]
    column = np.concatenate([np.full(g.size, j) for j, g in enumerate(grids)])
    values = np.concatenate(grids)
    x = start.copy()
    visited = []
    for _ in range(REFINE_ROUNDS):
        rows = np.repeat(x[None, :], values.size, axis=0)
        rows[np.arange(values.size), column] = values
        sweep = sign * result.model.predict_per_draw(rows).mean(axis=0)
        every = x.copy()
        for j in range(len(grids)):  # one argmin per parameter (a handful of columns)
            on = column == j
            every[j] = values[on][np.argmin(sweep[on])]
        one = int(np.argmin(sweep))
        both = float((sign * result.model.predict_per_draw(every[None, :])).mean())
        step, better = (every, both) if both <= sweep[one] else (rows[one], float(sweep[one]))
        if not better < now:
            break
        x, now = step.copy(), better
        visited.append(x)
    return np.array(visited).reshape(len(visited), start.size)


def best_candidate(
    result: FanovaResult, X: NDArray[np.float64]
) -> tuple[int, NDArray[np.float64]]:
    """The row of ``X`` the model predicts best (mean over its draws), and every draw's
    predictions at every row, signed so that lower is better (shape ``(T, n)``)."""
    sign = 1.0 if result.direction == "minimize" else -1.0
    pred = result.model.predict_per_draw(X) * sign
    return _best_row(pred), pred


def _best_row(pred: NDArray[np.float64]) -> int:
    """The row whose prediction, signed so that lower is better, is best on average
    over the draws (``pred`` of shape ``(T, n)``)."""
    return int(np.argmin(pred.mean(axis=0)))


def candidates(
    space: SearchSpace, configs: Sequence[Mapping[str, Any]], n: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    # every column drawn (inactive parameters too): the forest was trained on imputed
    # draws, and a condition's child is ignored by the objective where it is inactive
    X = np.empty((n, len(space)))
    for j, param in enumerate(space.params):
        X[:, j] = snap(param, measure_of(param).sample(rng, n))
    if configs:
        X = np.vstack([X, impute_inactive(space, space.encode(list(configs)), rng)])
    return X


def config_at(space: SearchSpace, row: NDArray[np.float64]) -> dict[str, Any]:
    """The configuration of an encoded candidate, with its active parameters only."""
    X = row[None, :].copy()
    X[~active_mask(space, X)] = np.nan  # drawn everywhere, but only active ones exist
    return space.decode(X)[0]


def defaults_for(
    history: TrialHistory, given: Mapping[str, Any] | DefaultValues | None,
    result: FanovaResult, n_candidates: int, seed: int | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The value each parameter would be fixed at, and where it came from: given, declared
    by the space, else its value in the best trial, else (inactive there) its value in the
    configuration the model predicts best (a random search over the space's measure and
    the trials, as :func:`surrogate_tuning_risk`)."""
    space = history.space
    given_values = dict(given.values) if isinstance(given, DefaultValues) else dict(given or {})
    unknown = sorted(set(given_values) - set(space.names))
    if unknown:
        raise InvalidDataError(f"suggest_subspace: defaults were given for {unknown!r}, which "
                               f"are not in the search space {list(space.names)!r}.")
    check_default_values(space, given_values, "suggest_subspace")
    declared = space.defaults
    incumbent = dict(history.best()[1])
    best: dict[str, Any] = {}
    if any(p.name not in given_values and p.name not in declared and p.name not in incumbent
           for p in space.params):
        rng = np.random.default_rng(None if seed is None else [seed, 0xBE57])
        X = candidates(result.space, history.configs, n_candidates, rng)
        best = config_at(result.space, X[best_candidate(result, X)[0]])
    chosen: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for param in space.params:
        n = param.name
        # as the parameter's own type: a trial's value may be a float for an integer
        # (a column read back from a file) or a numpy scalar
        if n in given_values:
            chosen[n], sources[n] = native_value(param, given_values[n]), "given"
        elif n in declared:
            chosen[n], sources[n] = native_value(param, declared[n]), "space"
        elif n in incumbent:
            chosen[n], sources[n] = native_value(param, incumbent[n]), "incumbent"
        elif n in best:
            chosen[n], sources[n] = best[n], "model"
        else:  # inactive where the model predicts the best: it matters little where it is fixed
            chosen[n], sources[n] = midpoint(param), "inactive"
    return chosen, sources


def check_default_values(space: SearchSpace, given: Mapping[str, Any], func: str, *,
                         fix: str = "or leave it out (its declared default, else the best "
                                    "trial's value, is used)") -> None:
    """Raise an error naming the first value of ``given`` its parameter cannot take, and
    ``fix`` beside "pass one that is" (names not in ``space`` are not checked: a parameter
    of a dynamic space may come later)."""
    for name, value in given.items():
        if name not in space.names:
            continue
        param = space.params[space.index(name)]
        if not param.contains(value):
            raise InvalidDataError(
                f"{func}: the default {value!r} given for {name!r} is not a value it can take "
                f"in the search space ({param!r}); pass one that is, {fix}.", name=name)


def midpoint(param: Float | Int | Categorical) -> Any:
    """The first choice of a categorical; else the middle of the range on the parameter's own
    scale (the geometric mean for ``log=True``), moved to the nearest value it can take."""
    if isinstance(param, Categorical):
        return param.choices[0]
    centre = 0.5 * (encode_value(param, param.low) + encode_value(param, param.high))
    snapped = float(snap(param, np.array([centre]))[0])  # onto the step grid, in bounds
    value = math.exp(snapped) if param.log else snapped
    if isinstance(param, Int):
        return round(value)
    return min(max(value, param.low), param.high)
