"""Which parameters may be fixed: surrogate tuning risk and the subspace suggestion.

Two questions decide whether a parameter can leave the search:

1. **Does it matter where it counts?** fANOVA on the objective capped at the best
   ``top_quantile`` of trials, and capped at the (predicted) value of the default
   configuration (Hutter, Hoos & Leyton-Brown 2014, Sec. 3.3): the variance a parameter
   explains *among good configurations* and *in improving on the default*. A parameter
   may explain much variance overall and still have one setting that is always good;
   capping removes the variance that only separates bad configurations.
2. **What does fixing it cost?** Tuning risk (Weerts 2018, Eq. 4) estimated on one
   study's surrogate instead of paired experiments: the best predicted value with the
   parameter at its default and all others free, minus the best with everything free.

:func:`surrogate_tuning_risk` answers (2). The search on the surrogate is a documented
random search: ``n_candidates`` configurations drawn from the space's measure plus the
study's own configurations for the free condition, and for parameter ``i`` the same
candidates with ``i`` set to its default (paired, as Weerts pairs seeds). Both optima
are chosen on the surrogate's mean; the risk's uncertainty is the spread over its trees
(or draws) of ``tree(best fixed) - tree(best free)``, a paired difference per tree. Both
searches are equally large, so both optima are equally optimistic; as in the paper, a
negative risk means the default beat what the search found.

:func:`suggest_subspace` combines both. A parameter is *kept* if

* its capped importance exceeds ``importance_threshold`` and the importance of every
  *shadow* (a column of random numbers added to the model as a null reference, after
  Boruta, Kursa & Rudnicki 2010; our addition). The capped importance is the one for
  improving on the default configuration when the defaults are real (given, or
  declared by the space) and enough trials beat it, else the one among the best
  ``top_quantile`` of trials;
* or (``overall=True``) its *uncapped* importance is distinguishable from the shadows:
  on a few dozen trials a forest cannot resolve how far a default is from a strong
  parameter's optimum and predicts no cost for fixing it, which
  ``benchmarks/bench_subspace.py`` showed fixing such parameters at a poor value;
* or fixing it is not safely cheap: its mean risk, or the ``confidence`` quantile of its
  per-tree risks, exceeds ``risk_margin`` times the spread of the good trials (from the
  best trial to the ``top_quantile`` quantile).

Everything else is fixed at its default. Capping at a quantile still credits a parameter
with one always-good setting (its bad settings sit at the cap, its good one dips
below), so the rule errs towards keeping.

Deviation from Weerts (2018): the paper's margin is on the *relative* risk
``(x_f - x_nf) / x_nf``, which needs a loss >= 0. A live study's objective can be
anything (a negative log-likelihood, a score to maximize), so the margin here is
relative to the spread among the good trials, which has the objective's units and sign
conventions built in and, like the capped analysis, looks at what separates good from
best rather than good from bad.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from ._defaults import DefaultValues, default_values
from ._encoding import active_mask, encode_value, measure_of, snap
from ._fanova import FanovaResult, fanova
from ._forest import impute_inactive
from ._gp import GaussianProcessSurrogate
from ._history import TrialHistory, as_history
from ._optional import import_optional
from ._params import Categorical, Float, Int
from ._shared import REPR_WIDTH, clip_text, fmt_value, join_items, json_value, readonly
from ._space import SearchSpace
from ._validation import check_choice, check_int, check_real, check_seed
from .exceptions import InvalidArgumentTypeError, InvalidDataError

if TYPE_CHECKING:
    from numpy.typing import NDArray


__all__ = ["SubspaceResult", "SurrogateRisk", "suggest_subspace", "surrogate_tuning_risk"]


@dataclass(frozen=True, slots=True)
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
        Over trees, of ``tree(best fixed) - tree(best free)`` in objective units, oriented
        so that positive means worse (for a maximized objective, the score lost). For a
        Gaussian process, over its draws, and ``std`` includes ``posterior_sd``.
    quantiles : dict of float to float
        Quantiles of the risk (0.5, 0.9, 0.95): of the per-tree risks, or for a Gaussian
        process of the draws' risks each widened by the posterior uncertainty (a mixture
        of normals).
    per_tree : ndarray of shape (n_trees,)
    best_fixed, best_free : dict
        The configurations the search found.
    posterior_sd : float
        A Gaussian process's posterior standard deviation of the difference
        (:meth:`GaussianProcessSurrogate.difference_sd`); 0 for a forest, whose trees
        carry their spread themselves.

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
    per_tree: NDArray[np.float64] = field(repr=False)
    best_fixed: dict[str, Any] = field(repr=False)
    best_free: dict[str, Any] = field(repr=False)
    posterior_sd: float = 0.0

    def __repr__(self) -> str:
        q90 = self.quantiles.get(0.9)
        tail = f": {self.mean:.4g} ± {self.std:.4g}{'' if q90 is None else f', q90={q90:.4g}'})"
        head = "SurrogateRisk("
        where = f"{self.param} at {fmt_value(self.default, quote=True)}"
        return f"{head}{clip_text(where, REPR_WIDTH - len(head) - len(tail))}{tail}"

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of the risk (see ``quantiles``)."""
        return _mixture_quantile(self.per_tree, self.posterior_sd, q)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        return {
            "param": self.param, "default": json_value(self.default),
            "mean": json_value(self.mean), "std": json_value(self.std),
            "quantiles": {str(k): json_value(v) for k, v in self.quantiles.items()},
            "best_fixed": {k: json_value(v) for k, v in self.best_fixed.items()},
            "best_free": {k: json_value(v) for k, v in self.best_free.items()},
            "posterior_sd": json_value(self.posterior_sd),
        }


def _mixture_quantile(values: NDArray[np.float64], sd: float, q: float) -> float:
    """The ``q`` quantile of ``values``, each widened by a normal of standard deviation
    ``sd`` (an equal-weight mixture); of ``values`` themselves when ``sd`` is 0."""
    if not sd > 0:
        return float(np.quantile(values, q))
    lo, hi = float(values.min()) - 10.0 * sd, float(values.max()) + 10.0 * sd
    return float(brentq(lambda t: float(ndtr((t - values) / sd).mean()) - q, lo, hi, xtol=1e-12 * max(1.0, sd)))


def surrogate_tuning_risk(
    result: FanovaResult,
    defaults: Mapping[str, Any],
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
    defaults : mapping of str to value
        The value each parameter would be fixed at; parameters not named are not assessed.
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
    n_candidates = check_int(n_candidates, "n_candidates", func, minimum=1)
    seed = check_seed(seed, func)
    space = result.space
    rng = np.random.default_rng(seed)
    X = _candidates(space, configs, n_candidates, rng)
    cols = {}
    for name, value in defaults.items():
        j = space.index(name)
        param = space.params[j]
        if not param.contains(value):
            raise InvalidDataError(f"{func}: the default {value!r} of {name!r} is outside its "
                                   "range in the search space.", name=name)
        cols[name] = (j, encode_value(param, value))
    sign = 1.0 if result.direction == "minimize" else -1.0
    free_pred = result.model.predict_per_tree(X) * sign  # (T, n): lower is better
    fixed_preds = {}
    for name, (j, v) in cols.items():
        Xi = X.copy()
        Xi[:, j] = v
        fixed_preds[name] = (Xi, result.model.predict_per_tree(Xi) * sign)
    # free and fixed searches over equally many paired candidates, so both optima carry
    # the same winner's-curse bias (a pool with every fixed variant in it would favour
    # the free side by its size alone)
    k_free = int(np.argmin(free_pred.mean(axis=0)))
    best_free = _config_at(space, X[k_free])
    chosen = {name: int(np.argmin(P.mean(axis=0))) for name, (Xi, P) in fixed_preds.items()}
    sds = dict.fromkeys(fixed_preds, 0.0)
    if isinstance(result.model, GaussianProcessSurrogate) and fixed_preds:
        A = np.stack([Xi[chosen[name]] for name, (Xi, _) in fixed_preds.items()])
        sds = dict(zip(fixed_preds, map(float, result.model.difference_sd(A, np.repeat(X[[k_free]], len(A), 0))),
                       strict=True))
    out = {}
    for name, (Xi, P) in fixed_preds.items():
        k = chosen[name]
        per_tree = P[:, k] - free_pred[:, k_free]
        sd = sds[name]
        out[name] = SurrogateRisk(
            param=name, default=defaults[name], mean=float(per_tree.mean()),
            std=float(math.sqrt(per_tree.var() + sd**2)),
            quantiles={q: _mixture_quantile(per_tree, sd, q) for q in (0.5, 0.9, 0.95)},
            per_tree=readonly(per_tree), best_fixed=_config_at(space, Xi[k]),
            best_free=best_free, posterior_sd=sd,
        )
    return out


def _candidates(
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


def _config_at(space: SearchSpace, row: NDArray[np.float64]) -> dict[str, Any]:
    """The configuration of an encoded candidate, with its active parameters only."""
    X = row[None, :].copy()
    X[~active_mask(space, X)] = np.nan  # drawn everywhere, but only active ones exist
    return space.decode(X)[0]


def _without(config: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in names}


@dataclass(frozen=True, slots=True)
class SubspaceResult:
    """Which parameters to keep searching and which to fix (see :func:`suggest_subspace`).

    Attributes
    ----------
    keep : tuple of str
        Parameters to keep tuning, most important (among the best trials) first.
    fixed : dict of str to value
        Parameters that may be fixed, and the value to fix them at.
    reasons : dict of str to str
        One sentence per parameter: why it was kept or fixed.
    importance_all : dict of str to float
        Mean fraction of variance of each main effect, uncapped.
    importance_top, importance_default : dict of str to float
        Mean fraction of variance with the objective capped at the best
        ``top_quantile`` of trials, and at the default configuration's predicted value.
        The second is NaN when it was not computed (too few trials beat the default
        configuration, or ``good="quantile"``).
    notion : {"default", "quantile"}
        Which of the two capped importances decided.
    null_importance : dict of str to float
        The largest importance of a shadow column of random numbers, per notion
        ("all", "top", "default"; NaN where not computed): what noise scores.
    risks : dict of str to SurrogateRisk
    defaults : dict of str to value
        The default of every parameter, and ``default_sources`` where it came from.
    default_sources : dict of str to str
        "given", "space" (declared in the search space), "data" (the most frequent
        setting among the best trials) or "inactive" (inactive in all of them: the middle
        of its range, or its first choice).
    margin : float
        The risk margin in objective units (``risk_margin`` times the good trials'
        spread).
    n_trials : int
    grounds : dict of str to str
        Why each parameter was kept or fixed, as a word: "important", "risky" (fixing it
        may cost more than ``margin``), "min_keep" (kept to keep ``min_keep``) or "safe"
        (fixed: unimportant and safely cheap to fix). ``reasons`` says the same in words,
        with the numbers.
    thresholds : dict of str to float
        What an importance had to exceed to count: ``"all"`` (uncapped) and ``"capped"``
        (the deciding notion), each the larger of the given threshold and the shadows'.
    confidence : float
        The quantile of the cost of fixing that had to stay below ``margin``.
    top_n : int
        How many of the best trials the data-driven defaults came from.

    Examples
    --------
    >>> import math
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a", 0, 1)])
    >>> configs = space.sample(40, seed=1)
    >>> y = [(math.log10(c["lr"]) + 2) ** 2 for c in configs]
    >>> sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), surrogate="forest",
    ...                           n_trees=8, n_candidates=200, seed=0)
    >>> sub.to_frame()[["param", "keep"]].values.tolist()
    [['lr', True], ['a', False]]
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> [t.get_text() for t in sub.plot(ax=Figure().add_subplot()).get_yticklabels()][0]
    'lr  (keep)'
    """

    keep: tuple[str, ...]
    fixed: dict[str, Any]
    reasons: dict[str, str]
    importance_all: dict[str, float]
    importance_top: dict[str, float]
    importance_default: dict[str, float]
    notion: str
    null_importance: dict[str, float]
    risks: dict[str, SurrogateRisk] = field(repr=False)
    defaults: dict[str, Any] = field(repr=False)
    default_sources: dict[str, str] = field(repr=False)
    margin: float = float("nan")
    n_trials: int = 0
    grounds: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    confidence: float = 0.9
    top_n: int = 0

    def __repr__(self) -> str:
        head = (f"SubspaceResult(n_trials={self.n_trials}, notion={self.notion!r}, "
                f"margin={self.margin:.4g}, keep=[")
        middle, tail = "], fixed={", "})"
        keep = [repr(n) for n in self.keep]
        fixed = [(repr(n), f": {fmt_value(v, quote=True)}") for n, v in self.fixed.items()]
        room = REPR_WIDTH - len(head) - len(middle) - len(tail)
        # kept names first: fixed ones get what is left, at least a third if they need it
        full_fixed = ", ".join(n + v for n, v in fixed)
        shown_keep = join_items(keep, room - min(len(full_fixed), room // 3))
        shown_fixed = join_items(fixed, room - len(shown_keep))
        return f"{head}{shown_keep}{middle}{shown_fixed}{tail}"

    @property
    def not_yet_safe(self) -> tuple[str, ...]:
        """Kept parameters that matter too little to keep for their effect, but whose cost of
        fixing is not yet shown to be small enough (``grounds`` "risky")."""
        return tuple(n for n in self.keep if self.grounds.get(n) == "risky")

    def default_origin(self, name: str) -> str:
        """Where the default of ``name`` came from, in words."""
        return default_origin(self.default_sources[name], self.top_n)

    def explain(self) -> str:
        """The reasons, one line per parameter, kept ones first."""
        names = list(self.keep) + list(self.fixed)
        return "\n".join(f"{n}: {self.reasons[n]}" for n in names)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe representation (NaN becomes None)."""
        def numbers(d: Mapping[str, float]) -> dict[str, Any]:
            return {k: json_value(v) for k, v in d.items()}

        return {
            "keep": list(self.keep),
            "fixed": {k: json_value(v) for k, v in self.fixed.items()},
            "reasons": dict(self.reasons),
            "notion": self.notion,
            "null_importance": numbers(self.null_importance),
            "importance_all": numbers(self.importance_all),
            "importance_top": numbers(self.importance_top),
            "importance_default": numbers(self.importance_default),
            "risks": {k: r.to_dict() for k, r in self.risks.items()},
            "defaults": {k: json_value(v) for k, v in self.defaults.items()},
            "default_sources": dict(self.default_sources),
            "margin": json_value(self.margin),
            "n_trials": self.n_trials,
            "grounds": dict(self.grounds),
            "thresholds": {k: json_value(v) for k, v in self.thresholds.items()},
            "confidence": self.confidence,
            "top_n": self.top_n,
        }

    def to_frame(self) -> Any:
        """One row per parameter, kept ones first (the order of :meth:`explain`).

        Returns
        -------
        pandas.DataFrame
            Columns ``param``, ``keep`` (bool), ``default`` (the value a fixed
            parameter is fixed at), ``default_source``, ``importance_all``,
            ``importance_top``, ``importance_default`` (NaN when not computed),
            ``risk_mean`` and ``risk_std`` (:class:`SurrogateRisk`, objective units)
            and ``reason``.
        """
        pd = import_optional("pandas", "SubspaceResult.to_frame")
        rows = []
        for name in (*self.keep, *self.fixed):
            risk = self.risks.get(name)
            rows.append({
                "param": name, "keep": name in self.keep, "default": self.defaults.get(name),
                "default_source": self.default_sources.get(name),
                "importance_all": self.importance_all.get(name, math.nan),
                "importance_top": self.importance_top.get(name, math.nan),
                "importance_default": self.importance_default.get(name, math.nan),
                "risk_mean": math.nan if risk is None else risk.mean,
                "risk_std": math.nan if risk is None else risk.std,
                "reason": self.reasons.get(name, ""),
            })
        return pd.DataFrame(rows, columns=[
            "param", "keep", "default", "default_source", "importance_all", "importance_top",
            "importance_default", "risk_mean", "risk_std", "reason"])

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Importance and cost of fixing per parameter, with the risk margin as a line;
        see :func:`hpinsight.plotting.plot_subspace`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Passed on to ``plot_subspace`` (it takes none today).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plotting import plot_subspace

        return plot_subspace(self, ax=ax, **kwargs)


def suggest_subspace(
    source: Any,
    *,
    defaults: Mapping[str, Any] | DefaultValues | None = None,
    top_quantile: float = 0.25,
    good: Literal["auto", "default", "quantile"] = "auto",
    overall: bool = True,
    importance_threshold: float = 0.05,
    risk_margin: float = 0.05,
    confidence: float = 0.9,
    shadows: int = 3,
    min_keep: int = 1,
    surrogate: Literal["gp", "forest"] = "gp",
    n_trees: int = 64,
    n_candidates: int = 2000,
    seed: int | None = None,
    n_jobs: int | None = None,
) -> SubspaceResult:
    """Suggest the parameters to keep tuning and fix the rest at defaults.

    Parameters
    ----------
    source : TrialHistory or optuna.Study
        The trials so far (a study is read with ``TrialHistory.from_optuna``).
    defaults : mapping or DefaultValues, optional
        Values to fix parameters at. Missing parameters take the search space's
        declared default, else the data-driven default from the study's best
        ``top_quantile`` of trials (:func:`~hpinsight.default_values`).
    top_quantile : float in (0, 1), default=0.25
        The "good part of the space" of the quantile notion (Sec. 3.3).
    good : {"auto", "default", "quantile"}, default="auto"
        Which capped importance decides: improving on the default configuration
        ("default"; "auto" picks it when every default was given or declared by the
        space and at least max(5, 10 %) of the trials beat the default configuration's
        predicted value) or the best ``top_quantile`` of trials ("quantile").
    overall : bool, default=True
        Also keep every parameter whose uncapped importance exceeds that of every
        shadow column (and a tenth of ``importance_threshold``): anything
        distinguishable from noise overall. A forest fit on tens of trials cannot resolve how far
        a default is from a strong parameter's optimum, so it often predicts no cost
        for fixing it; ``benchmarks/bench_subspace.py`` measured the effect (README).
        ``False`` follows the capped analysis and the risk alone (Weerts' point that
        an important parameter with an always-good setting need not be tuned), which
        suits large, unbiased histories.
    importance_threshold : float, default=0.05
        Keep a parameter whose capped importance exceeds this and the null importance.
    shadows : int, default=3
        Columns of random numbers added to the forests as a null reference: a
        parameter counts as important only if it explains more than every shadow
        (0: the threshold alone decides).
    risk_margin : float, default=0.05
        Fixing must cost less than this fraction of the spread of the good trials
        (best trial to the ``top_quantile`` quantile), on average over trees...
    confidence : float in (0.5, 1), default=0.9
        ...and in this fraction of the trees.
    min_keep : int, default=1
        Keep at least this many parameters (the most important among the best trials).
    surrogate : {"gp", "forest"}, default="gp"
        The model behind every importance and risk (see :func:`hpinsight.fanova`).
    n_trees, n_candidates, seed, n_jobs
        Forest size, surrogate search size, seed and cores.

    Returns
    -------
    SubspaceResult

    Raises
    ------
    InvalidDataError
        Fewer than 10 trials, or a default outside the space.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("lr", 1e-4, 1, log=True), hp.Float("a", 0, 1),
    ...                         hp.Float("b", 0, 1)])
    >>> configs = space.sample(150, seed=1)
    >>> import math
    >>> y = [(math.log10(c["lr"]) + 2) ** 2 + 0.001 * c["a"] for c in configs]
    >>> sub = hp.suggest_subspace(hp.TrialHistory(space, configs, y), seed=0)
    >>> sub.keep, sorted(sub.fixed)
    (('lr',), ['a', 'b'])
    """
    func = "suggest_subspace"
    history = as_history(source, func)
    top_quantile = check_real(top_quantile, "top_quantile", func, low=0.0, high=1.0, low_open=True)
    importance_threshold = check_real(importance_threshold, "importance_threshold", func,
                                      low=0.0, high=1.0)
    risk_margin = check_real(risk_margin, "risk_margin", func, low=0.0, high=math.inf)
    confidence = check_real(confidence, "confidence", func, low=0.5, high=1.0)
    min_keep = check_int(min_keep, "min_keep", func, minimum=0)
    seed = check_seed(seed, func)
    good = check_choice(good, "good", func, ("auto", "default", "quantile"))
    if history.n_trials < 10:
        raise InvalidDataError(f"{func} needs at least 10 trials to judge importance and "
                               f"risk; the history has {history.n_trials}. Run more trials.")
    space = history.space
    top_n = max(5, math.ceil(top_quantile * history.n_trials))  # "the best trials"
    chosen, sources = _defaults_for(history, defaults, top_n)
    shadows = check_int(shadows, "shadows", func, minimum=0)
    aug, shadow_names = _with_shadows(history, shadows, seed)
    surrogate = check_choice(surrogate, "surrogate", func, ("gp", "forest"))
    # the shadows above are this rule's null; fanova's own (significance) would be a second
    opts: dict[str, Any] = {"surrogate": surrogate, "n_trees": n_trees, "seed": seed,
                            "n_jobs": n_jobs, "significance": False}
    sign = 1.0 if history.direction == "minimize" else -1.0
    plain, imp_all, imp_top, imp_default, notion = _importances(
        history, aug, shadow_names, chosen, sources, opts, top_quantile, good, func)
    null = {
        key: max((imp[n] for n in shadow_names), default=0.0)
        for key, imp in (("all", imp_all), ("top", imp_top), ("default", imp_default))
    }
    imp_all, imp_top, imp_default = ({n: imp[n] for n in space.names}
                                     for imp in (imp_all, imp_top, imp_default))
    importance = imp_default if notion == "default" else imp_top
    threshold = max(importance_threshold, null["default" if notion == "default" else "top"])
    threshold_all = max(0.1 * importance_threshold, null["all"])
    risks = {  # the shadow columns are ours, not the user's: out of the configurations
        name: replace(risk, best_fixed=_without(risk.best_fixed, shadow_names),
                      best_free=_without(risk.best_free, shadow_names))
        for name, risk in surrogate_tuning_risk(plain, chosen, configs=aug.configs,
                                                n_candidates=n_candidates, seed=seed).items()
    }
    best = float(np.min(sign * history.y))
    gain = float(np.quantile(sign * history.y, top_quantile)) - best
    margin = risk_margin * gain

    ranked = sorted(space.names, key=lambda n: (-importance[n], -imp_top[n]))
    keep, reasons, grounds = _decide(
        ranked, risks, chosen, sources, importance=importance, imp_all=imp_all,
        imp_top=imp_top, imp_default=imp_default, threshold=threshold,
        threshold_all=threshold_all, margin=margin, gain=gain, confidence=confidence,
        overall=overall, min_keep=min_keep, top_n=top_n, top_quantile=top_quantile)
    fixed = {n: chosen[n] for n in ranked if n not in keep}
    return SubspaceResult(
        keep=tuple(keep), fixed=fixed, reasons=reasons, importance_all=imp_all,
        importance_top=imp_top,
        importance_default=imp_default, notion=notion, null_importance=null, risks=risks, defaults=dict(chosen),
        default_sources=sources, margin=float(margin), n_trials=history.n_trials,
        grounds=grounds, thresholds={"all": float(threshold_all), "capped": float(threshold)},
        confidence=float(confidence), top_n=top_n,
    )


def _importances(
    history: TrialHistory, aug: TrialHistory, shadow_names: list[str],
    chosen: Mapping[str, Any], sources: Mapping[str, str], opts: dict[str, Any],
    top_quantile: float, good: str, func: str,
) -> tuple[FanovaResult, dict[str, float], dict[str, float], dict[str, float], str]:
    """Step 1 of :func:`suggest_subspace`: main effects (shadows included) over all
    trials, among the best, and, when the default is a real one that enough trials
    beat, for improving on it; and which of the last two judges importance."""
    sign = 1.0 if history.direction == "minimize" else -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant capped objectives are expected here
        plain = fanova(aug, **opts)
        imp_all = _main_effects(plain)
        imp_top = _main_effects(fanova(aug, cap_quantile=top_quantile, **opts))
        # predicted value of the default configuration (shadow columns at their middle),
        # and how many trials beat it
        full_default = {**chosen, **dict.fromkeys(shadow_names, 0.5)}
        default_X = np.array([[encode_value(p, full_default[p.name]) for p in aug.space.params]])
        default_value = float(plain.model.predict_per_tree(default_X).mean())
        n_better = int(np.sum(sign * history.y < sign * default_value))
        enough = n_better >= max(5, 0.1 * history.n_trials)
        # data-driven defaults sit among the best trials, so "improving on them" is mostly
        # noise: "auto" uses that notion only for given or declared defaults
        real = all(origin in ("given", "space") for origin in sources.values())
        if good == "default" and not enough:
            raise InvalidDataError(
                f"{func}: only {n_better} of {history.n_trials} trials beat the default "
                "configuration's predicted value; importance for improving on it needs at "
                "least max(5, 10 %) of them. Use good='quantile' or run more trials.")
        notion = "default" if good == "default" or (good == "auto" and enough and real) \
            else "quantile"
        if notion == "default":
            imp_default = _main_effects(fanova(aug, cap_value=default_value, **opts))
        else:
            imp_default = dict.fromkeys(aug.space.names, math.nan)
    return plain, imp_all, imp_top, imp_default, notion


def _decide(
    ranked: list[str], risks: Mapping[str, SurrogateRisk], chosen: Mapping[str, Any],
    sources: Mapping[str, str], *, importance: Mapping[str, float],
    imp_all: Mapping[str, float], imp_top: Mapping[str, float],
    imp_default: Mapping[str, float], threshold: float, threshold_all: float,
    margin: float, gain: float, confidence: float, overall: bool, min_keep: int,
    top_n: int, top_quantile: float,
) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """Step 2 of :func:`suggest_subspace`: keep or fix each parameter, most important
    first, with the reason in words and as a word (``SubspaceResult.grounds``)."""
    keep: list[str] = []
    reasons: dict[str, str] = {}
    grounds: dict[str, str] = {}
    for name in ranked:
        risk = risks[name]
        upper = risk.quantile(confidence)
        important = importance[name] > threshold or (overall and imp_all[name] > threshold_all)
        risky = gain <= 0 or upper > margin or risk.mean > margin
        over_default = ("" if math.isnan(imp_default[name]) else
                        f" and {imp_default[name]:.2f} of the improvement over the default")
        numbers = (f"explains {imp_all[name]:.2f} of the variance (threshold "
                   f"{threshold_all:.2f}), {imp_top[name]:.2f} among the best "
                   f"{top_quantile:.0%}{over_default} (threshold {threshold:.2f}); fixing it "
                   f"at {fmt_value(chosen[name], quote=True)} "
                   f"({default_origin(sources[name], top_n)}) costs "
                   f"{risk.mean:.3g} ± {risk.std:.3g} ({confidence:.0%} quantile: "
                   f"<= {upper:.3g}; margin {margin:.3g})")
        if important or risky or len(keep) < min_keep:
            why = ("important" if important else "risky to fix" if risky
                   else f"kept to keep at least {min_keep}")
            keep.append(name)
            reasons[name] = f"kept ({why}): {numbers}"
            grounds[name] = "important" if important else "risky" if risky else "min_keep"
        else:
            reasons[name] = f"fixed (unimportant and safe to fix): {numbers}"
            grounds[name] = "safe"
    return keep, reasons, grounds


def default_origin(source: str, top_n: int) -> str:
    """Where a default came from, in words (``SubspaceResult.default_sources``)."""
    return {"given": "given", "space": "the space's default",
            "data": f"most frequent in the best {top_n} trials",
            "inactive": f"inactive in all of the best {top_n} trials: the middle of its "
                        "range, or its first choice"}[source]


def _with_shadows(
    history: TrialHistory, k: int, seed: int | None
) -> tuple[TrialHistory, list[str]]:
    """``history`` with ``k`` extra uniform [0, 1] columns independent of the objective."""
    if k == 0:
        return history, []
    names = [f"__shadow{i}__" for i in range(k)]
    clash = set(names) & set(history.space.names)
    if clash:
        raise InvalidDataError(f"Parameter names {sorted(clash)!r} are reserved for the null "
                               "reference; rename them or pass shadows=0.")
    rng = np.random.default_rng(None if seed is None else [seed, 0x5AD0])
    values = rng.uniform(size=(history.n_trials, k))
    space = SearchSpace([*history.space.params, *(Float(n, 0.0, 1.0) for n in names)],
                        conditions=history.space.conditions)
    configs = [{**c, **dict(zip(names, map(float, row), strict=True))}
               for c, row in zip(history.configs, values, strict=True)]
    return TrialHistory(space, tuple(configs), history.y, direction=history.direction,
                        trial_ids=history.trial_ids, excluded=history.excluded,
                        objective_name=history.objective_name), names


def _defaults_for(
    history: TrialHistory, given: Mapping[str, Any] | DefaultValues | None, top_n: int
) -> tuple[dict[str, Any], dict[str, str]]:
    space = history.space
    given_values = dict(given.values) if isinstance(given, DefaultValues) else dict(given or {})
    unknown = sorted(set(given_values) - set(space.names))
    if unknown:
        raise InvalidDataError(f"Defaults were given for {unknown!r}, which are not in the "
                               f"search space {list(space.names)!r}.")
    data = default_values(history, top_n=top_n).values
    declared = space.defaults
    chosen: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for param in space.params:
        n = param.name
        if n in given_values:
            chosen[n], sources[n] = given_values[n], "given"
        elif n in declared:
            chosen[n], sources[n] = declared[n], "space"
        elif n in data:
            chosen[n], sources[n] = data[n], "data"
        else:  # inactive in every top trial: it matters little where it is fixed
            chosen[n], sources[n] = _midpoint(param), "inactive"
    return chosen, sources


def _midpoint(param: Float | Int | Categorical) -> Any:
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


def _main_effects(result: FanovaResult) -> dict[str, float]:
    if result.is_constant:
        return dict.fromkeys(result.space.names, 0.0)
    return {n: result.importance(n).mean for n in result.space.names}


