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
  ``FanovaResult.n_constant_draws``. If every tree is constant the objective
  is flagged constant and all importances are 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._fanova_result import (
    VERDICTS,
    FanovaResult,
)
from ._history import TrialHistory
from ._shared import readonly, spread_beyond_rounding
from ._validation import (
    MODEL_KEYWORDS,
    check_choice,
    check_int,
    check_real,
    check_seed,
    moved_keywords,
)
from ._warn import held_back, warn
from .adapters import as_history
from .exceptions import (
    ConstantObjectiveWarning,
    FewTrialsWarning,
    InvalidArgumentError,
    InvalidDataError,
)
from .space import Categorical, SearchSpace
from .surrogates import GP, FittedSurrogate, Forest, as_surrogate, decompose
from .surrogates.forest import FittedForest
from .surrogates.gp import FittedGP, decompose_gp, refit_fractions, regrown_shares

if TYPE_CHECKING:
    from numpy.typing import NDArray


__all__ = ["fanova"]


@moved_keywords(MODEL_KEYWORDS)
def fanova(
    history: TrialHistory | Any,
    *,
    surrogate: GP | Forest | FittedSurrogate | None = None,
    max_order: int = 1,
    cap_quantile: float | None = None,
    cap_value: float | None = None,
    direction: Literal["minimize", "maximize"] | None = None,
    seed: int | None = None,
) -> FanovaResult:
    """Exact functional ANOVA of a surrogate model fit on a trial history.

    Parameters
    ----------
    history : TrialHistory or optuna.Study
        The trials: ``TrialHistory(space, configs, y)`` for plain data, an adapter's
        (``hp.adapters.from_optuna(study)``, ``hp.adapters.from_smac(...)``), or an Optuna study,
        read with ``from_optuna``. It brings the space (which fixes the measure
        integrated over), the objective values and the direction.
    surrogate : GP, Forest or a fitted model, default=GP()
        The model whose prediction is decomposed. ``hp.GP()``: a Gaussian process with
        one length scale per parameter, exact for its posterior mean, which stays right
        on the clustered samples optimizers produce, where forests credit parameters
        that do nothing (see ``hpinsight.surrogates.gp`` and
        ``benchmarks/bench_biased.py``); with ``shadows=True`` (its default) each effect
        is also compared with shadows of the parameters (:attr:`Importance.verdict`).
        ``hp.Forest(n_trees=64)``: a random forest, the paper's estimate, exact for the
        forest. A fitted model (``hp.Forest.from_estimator(model)`` for a scikit-learn
        forest trained on ``history.space.encode(history.configs)`` with inactive
        entries filled in, or an optimizer's own forest such as
        ``hpinsight.integrations.smac.smac_forest``) is decomposed as it is; the
        history's trials are then only validated and counted, and capping is not
        possible.
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
    seed : int, optional
        Same seed, bit-identical result.

    Returns
    -------
    FanovaResult

    Raises
    ------
    TypeError
        ``history`` is neither a TrialHistory nor a study (the message shows how to make
        one), or an option the model object now holds was passed here (the message
        names the object).
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
    >>> hp.fanova(hp.TrialHistory(space, configs, y), surrogate=hp.Forest(n_trees=16),
    ...           seed=0).n_draws
    16
    """
    history = as_history(history, "fanova")
    opts = _checked_options(
        history, surrogate=surrogate, seed=seed, max_order=max_order,
        cap_quantile=cap_quantile, cap_value=cap_value, direction=direction)
    space = history.space
    X = history.encoded()
    y, applied_cap = _capped_target(history.y, opts)
    index_subsets = [s for k in range(1, opts.max_order + 1)
                     for s in combinations(range(len(space)), k)]
    model = (opts.surrogate.fit(space, X, y, seed=opts.seed,
                                maximize=opts.direction == "maximize")
             if isinstance(opts.surrogate, GP | Forest) else opts.surrogate)
    variances, draw_var, draw_mean = decompose(model, space, index_subsets, opts.max_order)
    names = space.names
    result = FanovaResult(
        space=_with_inferred_conditions(space, X),
        subsets=tuple(tuple(names[j] for j in s) for s in index_subsets),
        variances=readonly(variances),
        draw_variances=readonly(draw_var),
        draw_means=readonly(draw_mean),
        max_order=opts.max_order,
        n_trials=int(X.shape[0]),
        n_excluded=history.n_excluded,
        n_inactive={n: int(c) for n, c in zip(names, np.isnan(X).sum(axis=0), strict=True)},
        untried=_untried(space, X),
        unvaried=_unvaried(space, X),
        cap_value=applied_cap,
        cap_quantile=opts.cap_quantile,
        direction=opts.direction,
        fit_r2=model.fit_r2,
        seed=opts.seed,
        model=model,
        surrogate=opts.surrogate,
        shadow_fractions=model.shadow_fractions,
        refit_fractions=_refit_shares(model, index_subsets, float(draw_var.mean())),
        # an optimizer's own forest may predict a transformed objective: say which
        objective_name=(model.target if isinstance(model, FittedForest) and model.target
                        else history.objective_name),
        hidden_fractions=None if applied_cap is not None else _hidden_shares(model, draw_var),
        pruned_fractions=_pruned_shares(model, index_subsets),
    )
    result = _with_regrown(result, X, y, index_subsets)
    # every trial at one configuration: the objective may vary (noise), no parameter did
    same = X.shape[0] >= 2 and bool(np.all((X[0] == X) | (np.isnan(X) & np.isnan(X[0]))))
    if same and not result.is_constant:
        warn(
            f"Every one of the {X.shape[0]} trials has the same configuration: no parameter "
            "was varied, so the shares say nothing about any of them (the differences "
            "between the trials are noise). Vary the parameters to measure their effects.",
            FewTrialsWarning, stacklevel=3)  # the caller of fanova's argument check
    if result.is_constant:
        kind = "forest" if opts.surrogate.kind == "forest" else "Gaussian process"
        why = ("one trial shows no variation (too little data, not a constant objective); "
               "run more trials" if X.shape[0] < 2 else
               "every trial has the same configuration, so no parameter was varied; vary them "
               "to measure their effects" if same else _flat_reason(history.y, y, applied_cap,
                                                                    opts.surrogate))
        warn(
            f"The {kind}'s prediction does not vary over the search space ({X.shape[0]} "
            f"trial(s) used): {why}, so every importance is 0.",
            ConstantObjectiveWarning,
            stacklevel=3,  # the caller of fanova's argument check
        )
    return result


def _flat_reason(raw: NDArray[np.float64], y: NDArray[np.float64], cap: float | None,
                 surrogate: Any) -> str:
    """Why a model's prediction is flat over the space when the trials varied in their
    configurations: the objective is constant, the cap made it so, or the model did not
    follow values that vary (it said "the objective looks constant" for all three)."""
    finite = raw[np.isfinite(raw)]
    if finite.size < 2 or spread_beyond_rounding(finite) is None:
        return "the objective looks constant"
    if cap is not None and spread_beyond_rounding(y[np.isfinite(y)]) is None:
        return (f"capped at {cap:g}, the trials' values are all equal (the best ones tie "
                "there, or every value lies beyond it); a cap farther from the best (a "
                "larger cap_quantile) leaves them some variation")
    leaf = getattr(surrogate, "min_samples_leaf", None)
    return ("the trials' values vary, but the model did not follow them"
            + (f" (min_samples_leaf={leaf} leaves its trees no split on {raw.size} "
               "trials; lower it)" if isinstance(leaf, int) and 2 * leaf > raw.size else "")
            + ", which shows no effect, and rules none out either")


def _untried(space: SearchSpace, X: NDArray[np.float64]) -> dict[str, tuple[Any, ...]]:
    """Each categorical parameter's choices that no trial where it is active took (only
    parameters active in some trial, and with some choice untried)."""
    out = {}
    for j, param in enumerate(space.params):
        if not isinstance(param, Categorical):
            continue
        taken = X[:, j][~np.isnan(X[:, j])]
        if taken.size:
            seen = set(np.unique(taken).astype(int).tolist())
            missing = tuple(c for k, c in enumerate(param.choices) if k not in seen)
            if missing:
                out[param.name] = missing
    return out


def _unvaried(space: SearchSpace, X: NDArray[np.float64]) -> dict[str, Any]:
    """Each parameter the space lets vary that is active in at least two trials and at
    one value in all of them, with that value."""
    out = {}
    for j, param in enumerate(space.params):
        if isinstance(param, Categorical) and len(param.choices) < 2:
            continue
        active = np.flatnonzero(~np.isnan(X[:, j]))
        if active.size >= 2 and bool(np.all(X[active, j] == X[active[0], j])):
            out[param.name] = space.decode(X[active[:1]])[0][param.name]
    return out


def fanova_quietly(history: TrialHistory, **options: Any) -> FanovaResult:
    """``fanova(history, **options)`` for callers that report a constant objective their
    own way (the result's notes, zeros): without the :class:`ConstantObjectiveWarning`."""
    with held_back(ConstantObjectiveWarning):
        return fanova(history, **options)


def _hidden_shares(model: FittedForest | FittedGP,
                   draw_var: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """Per parameter, the share an effect of it could hold that the trials cannot rule
    out (a Gaussian process whose prediction varies; else None)."""
    if not isinstance(model, FittedGP) or not (draw_var > 0).any():
        return None
    shares = model.hidden_shares(float(draw_var.mean()))  # FanovaResult.total_variance
    return None if shares is None else readonly(shares)


def _pruned_shares(model: FittedForest | FittedGP,
                   index_subsets: list[tuple[int, ...]]) -> NDArray[np.float64] | None:
    """Per subset with a column a GP's fit took out of the model, the share the fit gave
    it before (NaN for the others), or None where none was taken out; infinite where the
    model before did not factorize on the refits' rows (nothing then calls such an
    effect nothing)."""
    if not isinstance(model, FittedGP) or not model.pruned:
        return None
    out = np.full(len(index_subsets), np.nan)
    gone = set(model.pruned)
    touched = [i for i, s in enumerate(index_subsets) if gone.intersection(s)]
    if model.unpruned is None:
        out[touched] = np.inf
        return readonly(out)
    v, total, _ = decompose_gp(model.unpruned, [index_subsets[i] for i in touched])
    out[touched] = v[0] / total[0] if total[0] > 0 else 0.0
    return readonly(out)


def _with_regrown(result: FanovaResult, X: NDArray[np.float64], y: NDArray[np.float64],
                  index_subsets: list[tuple[int, ...]]) -> FanovaResult:
    """``result`` with every pair it would call resolved checked by taking the pair out
    of the data (:attr:`Importance.regrown`); a GP with shadows only: the check is part of
    the null."""
    model = result.model
    if not isinstance(model, FittedGP) or model.shadow_fractions is None or result.is_constant:
        return result
    picked = [i for i, s in enumerate(index_subsets)
              if len(s) == 2 and result.importance(*result.subsets[i]).verdict == VERDICTS[0]]
    if not picked:
        return result
    pairs = [(s[0], s[1]) for s in (index_subsets[i] for i in picked)]
    shares = regrown_shares(model, result.space, X, y, pairs,
                            float(result.draw_means[result.valid_draws].mean()), result.seed)
    regrown = np.full(len(index_subsets), np.nan)
    regrown[picked] = shares
    return replace(result, regrown_fractions=readonly(regrown))


def _refit_shares(model: FittedForest | FittedGP, index_subsets: list[tuple[int, ...]],
                  total: float) -> NDArray[np.float64] | None:
    """Every subset's share under each of a GP's hyperparameter refits (NaN for a refit
    that finds no signal against the model's variance ``total``), or None."""
    shares = (refit_fractions(model, index_subsets, total=total) if isinstance(model, FittedGP)
              else None)
    return None if shares is None else readonly(shares)


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


#: The widest spread of objective values analysed (its inverse, the narrowest that is not
#: zero): squared, as variances are, it stays well inside float64's range (about 1e308).
MAX_SPREAD = 1e120


@dataclass(frozen=True, slots=True)
class _Options:
    """The validated options of one :func:`fanova` call."""

    surrogate: GP | Forest | FittedForest | FittedGP
    seed: int | None
    max_order: int
    direction: Literal["minimize", "maximize"]
    cap_quantile: float | None
    cap_value: float | None


def _checked_options(history: TrialHistory, *, surrogate: Any, seed: Any, max_order: int,
                     cap_quantile: Any, cap_value: Any, direction: Any) -> _Options:
    """Step 1 of :func:`fanova`: check every option, once."""
    func = "fanova"
    if history.n_trials == 0:
        left_out = (f"; {history.excluded_summary()}: only finished trials with a finite value "
                    "are analysed" if history.n_excluded else " (an empty history)")
        raise InvalidDataError(f"{func} got no usable trials{left_out}. It needs at least one.")
    spread = float(np.ptp(history.y))
    if spread > MAX_SPREAD or 0 < spread < 1 / MAX_SPREAD:
        raise InvalidDataError(
            f"{func}: the objective's values span {spread:.3g}; variances of that scale "
            f"{'overflow' if spread > 1 else 'underflow'} in floating point (the analysis "
            f"squares differences of the values), so every share would be lost. Rescale the "
            "objective, e.g. "
            + (f"divide it by {10.0 ** round(math.log10(spread)):g}" if spread > 1 else
               f"multiply it by {10.0 ** -round(math.log10(spread)):g}")
            + " or take its logarithm, before analysing it.")
    model = as_surrogate(surrogate, func)
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
    if not isinstance(model, GP | Forest) and (cap_quantile is not None or cap_value is not None):
        raise InvalidArgumentError(
            f"{func} cannot cap the objective of an already fitted model; pass hp.Forest() "
            "or hp.GP() so hpinsight refits on the capped values, or cap y before fitting "
            "yours."
        )
    return _Options(model, check_seed(seed, func), max_order, better, cap_quantile, cap_value)


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
