"""An Optuna importance evaluator backed by hpinsight's exact fANOVA.

Differences from ``optuna.importance.FanovaImportanceEvaluator``:

* the marginals are exact for the fitted model and integrate over the search
  space's own measure (log-uniform for log parameters, uniform over integers
  and choices) instead of raw-scale uniform;
* conditional parameters are kept: a parameter present in only some trials is
  inactive in the others, and ``params=None`` assesses every parameter that
  occurs in a COMPLETE trial (as PED-ANOVA does), not only those present in
  all trials;
* the model is always fit on the whole space, and ``params`` only selects
  which importances are returned, so an importance does not depend on which
  other parameters were asked for;
* the full :class:`~hpinsight.results.FanovaResult` of the last call (std over draws,
  interactions, marginals, verdicts) stays available as :attr:`last_result`;
* ``evaluate`` fits the Gaussian process without its shadows and refits: they change
  only the verdicts and the spreads, never a mean, so the importances it returns are
  the full analysis's to the bit, three to seven times sooner
  (``benchmarks/bench_scale.py``, ``hp_evaluator``). :attr:`last_result` fits the full
  model when it is first read, on the trials that call saw.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import optuna
from optuna.importance import BaseImportanceEvaluator

from .._fanova import fanova_quietly
from .._fanova_result import MIN_TRIALS_HELD_OUT
from .._validation import (
    MODEL_KEYWORDS,
    check_int,
    check_objective,
    check_real,
    check_seed,
    moved_keywords,
)
from .._warn import warn
from ..adapters import from_optuna
from ..exceptions import (
    ExcludedTrialsWarning,
    FewTrialsWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)
from ..space import Categorical
from ..surrogates import GP, Forest, as_surrogate, means_only, refuse_fitted

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

    from .._fanova_result import FanovaResult
    from .._history import TrialHistory

__all__ = ["FanovaImportanceEvaluator"]


class FanovaImportanceEvaluator(BaseImportanceEvaluator):
    """fANOVA importances (Hutter et al., ICML 2014) for ``optuna.importance``.

    Each importance is the fraction of the surrogate's prediction variance over
    the search space that the parameter's main effect explains, averaged over
    the Gaussian process's bootstrap draws (or, with ``surrogate=hp.Forest()``, over
    trees: the paper's estimate). Use it wherever Optuna accepts an evaluator.

    The importances are the means of ``hpinsight.fanova`` with the same model and seed,
    bit for bit. To return them, :meth:`evaluate` fits the Gaussian process without the
    shadows and refits that only the verdicts and the spreads read (three to seven
    times sooner); :attr:`last_result`, the full analysis with its verdicts, is
    fitted when it is first read.

    Parameters
    ----------
    surrogate : GP or Forest, default=GP()
        The model decomposed: ``hp.GP()``, a Gaussian process with one length scale per
        parameter, whose importances stay right on the clustered samples TPE, CMA-ES and
        SMAC produce, or the paper's random forest, ``hp.Forest(n_trees=64)``
        (``hpinsight.fanova``).
    seed : int, optional
        Same seed, same study, bit-identical importances.
    objective : int or str, optional
        Which objective of a multi-objective study to analyse when ``evaluate`` gets no
        ``target``: an index, a name (``"values_1"``, or a metric name the study was
        given) or ``"front"``. Without either, a multi-objective study is analysed for
        reaching its Pareto front, as Optuna 5's default evaluator does: the value
        analysed is each trial's share of trials that dominate it (0 on the front;
        ``hpinsight._pareto``).
    cap_quantile : float in (0, 1], optional
        Importance in the good part of the space: cap the objective at this
        quantile of the trials (direction-aware) before fitting. The verdicts of
        :attr:`last_result` then call no effect "indistinguishable from nothing": that
        takes the analysis of all trials beside it
        (:meth:`~hpinsight.results.FanovaResult.beside`).
    max_order : int, default=1
        Also compute interactions up to this order; they are in
        :attr:`last_result`, while ``evaluate`` returns main effects.

    Examples
    --------
    >>> import optuna
    >>> from hpinsight.integrations.optuna import FanovaImportanceEvaluator
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    >>> study.optimize(
    ...     lambda t: t.suggest_float("x", -1, 1) ** 2 + 0.01 * t.suggest_float("y", -1, 1),
    ...     n_trials=60,
    ... )
    >>> evaluator = FanovaImportanceEvaluator(seed=0)
    >>> importances = optuna.importance.get_param_importances(study, evaluator=evaluator)
    >>> list(importances)
    ['x', 'y']
    >>> evaluator.last_result.importance("x").std < 0.05
    True
    """

    @moved_keywords(MODEL_KEYWORDS)
    def __init__(
        self,
        *,
        surrogate: GP | Forest | None = None,
        seed: int | None = None,
        objective: int | str | None = None,
        cap_quantile: float | None = None,
        max_order: int = 1,
    ) -> None:
        func = "FanovaImportanceEvaluator"
        self.surrogate: GP | Forest = refuse_fitted(as_surrogate(surrogate, func), func,
                                                    "on each study it is given")
        self.seed = check_seed(seed, func)
        self.objective = check_objective(objective, func)
        self.cap_quantile = (
            None
            if cap_quantile is None
            else check_real(cap_quantile, "cap_quantile", func, low=0.0, high=1.0, low_open=True)
        )
        self.max_order: int = check_int(max_order, "max_order", func, minimum=1)
        self._lock = threading.Lock()
        self._last: FanovaResult | None = None
        # the last call's trials and options, until last_result fits the full model
        self._pending: tuple[TrialHistory, dict[str, Any]] | None = None

    def __repr__(self) -> str:
        return (
            f"FanovaImportanceEvaluator(surrogate={self.surrogate!r}, seed={self.seed}, "
            f"objective={self.objective}, cap_quantile={self.cap_quantile})"
        )

    @property
    def last_result(self) -> FanovaResult | None:
        """The full analysis of the trials the last :meth:`evaluate` that fit a model saw
        (None before one): ``hpinsight.fanova`` with this evaluator's model, seed and
        options, verdicts and spreads included. Fitted when first read after that call
        (the call itself skips what only the verdicts need), then kept. The fit holds no
        lock: an :meth:`evaluate` in another thread meanwhile is not kept waiting (the
        read then returns the analysis it began, and keeps it only if no newer call came)."""
        with self._lock:
            pending, last = self._pending, self._last
        if pending is None:
            return last
        result = _analysis(*pending)
        with self._lock:
            if self._pending is pending:
                self._last, self._pending = result, None
        return result

    def evaluate(
        self,
        study: optuna.Study,
        params: list[str] | None = None,
        *,
        target: Callable[[FrozenTrial], float] | None = None,
    ) -> dict[str, float]:
        """Return ``{param: importance}``, sorted descending, as Python floats.

        Parameters
        ----------
        study : optuna.Study
        params : list of str, optional
            Parameters to report; each must occur in a COMPLETE trial.
            Default: every parameter that occurs in a COMPLETE trial.
        target : callable, optional
            ``target(frozen_trial) -> float``. Better is the study's direction; with
            several objectives, that of the objective the target reproduces on every trial
            (as ``plot_param_importances`` passes one per objective), else "minimize".

        Returns
        -------
        dict of str to float
            Non-negative; all zeros when at most one trial is usable or the
            objective is constant.

        Warns
        -----
        FewTrialsWarning
            Fewer than 5 usable trials: the numbers are a guess.
        ExcludedTrialsWarning
            COMPLETE trials with a NaN or infinite value were left out.

        Raises
        ------
        ValueError
            If a requested parameter occurs in no COMPLETE trial, or the ``objective``
            option names no objective of the study.
        """
        if params is not None:
            if not isinstance(params, list | tuple) or not all(isinstance(p, str) for p in params):
                raise InvalidArgumentTypeError(
                    "The 'params' parameter of FanovaImportanceEvaluator.evaluate must be a list "
                    f"of parameter names. Got {params!r} instead."
                )
            if not params:
                return {}
        complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        seen = {name for t in complete for name in t.distributions}
        missing = [p for p in params or () if p not in seen]
        if missing:
            raise InvalidArgumentError(
                f"No COMPLETE trial of study {study.study_name!r} has parameter(s) {missing!r}, "
                f"so their importance cannot be assessed. Parameters seen in COMPLETE trials: "
                f"{sorted(seen)!r}."
            )
        if not seen:
            return {}
        objective = None if target is not None else self.objective
        history = from_optuna(study, target=target, objective=objective)
        names = list(params) if params is not None else list(history.space.names)
        zeros = dict.fromkeys(names, 0.0)
        if history.excluded.get("non-finite value"):
            warn(
                f"{history.excluded['non-finite value']} COMPLETE trial(s) of study "
                f"{study.study_name!r} were left out of the importances because their value "
                "is NaN or infinite.",
                ExcludedTrialsWarning,
                stacklevel=None,  # the user's line
            )
        # the adapter turns exactly the distributions whose single() is true into
        # one-choice categoricals: a parameter with one value has no importance
        single = {p.name for p in history.space.params
                  if isinstance(p, Categorical) and len(p.choices) == 1}
        if history.n_trials < MIN_TRIALS_HELD_OUT and set(names) - single:
            warn(
                f"The importances of study {study.study_name!r} rest on {history.n_trials} "
                "usable trial(s): too few to tell an effect from chance (the model cannot be "
                f"checked on fewer than {MIN_TRIALS_HELD_OUT}), so "
                + ("they are all 0" if history.n_trials <= 1 else
                   "they say nothing yet; the evaluator's last_result gives every effect's "
                   "verdict") + ". Run more trials.",
                FewTrialsWarning,
                stacklevel=None,  # the user's line
            )
        if history.n_trials <= 1:
            return zeros
        options: dict[str, Any] = {"surrogate": self.surrogate, "seed": self.seed,
                                   "max_order": min(self.max_order, len(history.space)),
                                   "cap_quantile": self.cap_quantile}
        quick = _means_only(self.surrogate)
        result = _analysis(history, {**options, "surrogate": quick})
        with self._lock:
            if quick is self.surrogate:  # nothing was skipped: this is the full analysis
                self._last, self._pending = result, None
            else:
                self._last, self._pending = None, (history, options)
        if result.is_constant:
            return zeros
        values = {
            name: 0.0 if name in single else max(0.0, float(result.importance(name).mean))
            for name in names
        }
        return dict(sorted(values.items(), key=lambda kv: kv[1], reverse=True))


def _means_only(model: GP | Forest) -> GP | Forest:
    """The model whose fit gives the same means and skips what only verdicts and spreads
    read (:func:`~hpinsight.surrogates.means_only`); a forest, or a Gaussian process
    already without shadows and refits, as it is (its analysis is then the full one,
    kept as ``last_result``)."""
    if isinstance(model, GP) and (model.shadows or model.refits):
        return means_only(model)
    return model


def _analysis(history: TrialHistory, options: dict[str, Any]) -> FanovaResult:
    """``fanova(history, **options)``; a constant objective is answered with zeros, not warned."""
    return fanova_quietly(history, **options)
