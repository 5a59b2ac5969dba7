"""The doors optimizer data enters by: one function per source, each returning the core
types (:class:`~hpinsight.TrialHistory`, :class:`~hpinsight.SearchSpace`) that the analyses
take. The types themselves know no optimizer; these functions are the one place that does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from .._history import TrialHistory
from ..exceptions import InvalidArgumentTypeError
from ..space import SearchSpace
from ._configspace import space_from_configspace, space_to_configspace
from ._optuna import history_from_study
from ._optuna import space_from_optuna as _space_from_distributions
from ._smac import history_from_smac

__all__ = ["as_history", "as_objectives", "from_configspace", "from_optuna", "from_smac", "space_from_optuna",
           "to_configspace"]


def from_optuna(
    study: Any,
    *,
    target: Callable[[Any], float] | None = None,
    objective: int | str | None = None,
    direction: Literal["minimize", "maximize"] | None = None,
    params: Sequence[str] | None = None,
) -> TrialHistory:
    """Read the finished trials of an Optuna study (any storage).

    Only COMPLETE trials with a finite value are kept; PRUNED, FAIL,
    RUNNING and WAITING trials and non-finite values are counted in
    :attr:`excluded`. A parameter that only some trials suggested is
    inactive in the others (define-by-run conditionals); no trial is
    dropped for it. If a parameter's distribution changed during the
    study, the space covers the union of its distributions and one
    :class:`~hpinsight.exceptions.ChangedDistributionWarning` lists such parameters.

    Parameters
    ----------
    study : optuna.Study
    target : callable, optional
        ``target(frozen_trial) -> float`` computes the value analysed
        (e.g. ``lambda t: t.duration.total_seconds()``). Unless ``direction``
        says otherwise, better is the study's direction; with several objectives,
        that of the objective the target reproduces on every trial, else
        "minimize".
    objective : int or str, optional
        The objective of a multi-objective study: an index, a name (``"values_1"`` as in
        ``study.trials_dataframe()``, or a metric name the study was given with
        ``set_metric_names``) or ``"front"``, the default for several objectives:
        reaching the Pareto front, analysed as each trial's share of the trials that
        dominate it (0 on the front; ``hpinsight._pareto``). Trials with a non-finite
        value in any objective are left out of the front and counted in ``excluded``.
    direction : {"minimize", "maximize"}, optional
        Overrides the study's direction for the analysed value.
    params : sequence of str, optional
        Restrict the space to these parameters (each must occur in at
        least one COMPLETE trial).

    Returns
    -------
    TrialHistory

    Examples
    --------
    >>> import hpinsight as hp
    >>> history = hp.adapters.from_optuna(study, objective=0)  # doctest: +SKIP
    """
    history = history_from_study(TrialHistory, study, target=target, objective=objective,
                                 direction=direction, params=params)
    assert history is not None  # allow_empty is off, so it raised instead
    return history


def from_smac(
    source: Any,
    *,
    configspace: Any = None,
    objective: int | str | None = None,
    instances: Literal["auto", "mean", "model"] = "auto",
    budget: float | None = None,
) -> TrialHistory:
    """Read a SMAC3 run: a facade, a runhistory, or a saved output folder.

    One entry per configuration (``trial_id`` is SMAC's ``config_id``),
    valued by its successful runs at its highest budget (or at ``budget``), averaged
    over instances and seeds (see ``instances``). Runs that did not succeed
    (CRASHED, TIMEOUT, MEMORYOUT, RUNNING) and runs at lower budgets are
    counted in :attr:`excluded`. Where configurations reached different budgets
    (Hyperband, successive halving), their values mix budgets: ``sampling.budgets``
    counts the configurations valued at each, reports say so, and an effect can be
    the budget's rather than the parameter's; ``budget=`` analyses one. Parameters inactive in a configuration are
    missing from it; the space keeps ConfigSpace's conditions.

    Parameters
    ----------
    source : SMAC facade, smac.RunHistory, str or pathlib.Path
        A facade after (or during) ``optimize()``; a runhistory; or the
        folder SMAC saved a run to (``<output_directory>/<name>/<seed>``,
        or a parent holding exactly one run). A folder is read with
        ConfigSpace alone and may come from any SMAC 2.x release.
    configspace : ConfigSpace.ConfigurationSpace, optional
        The space of a runhistory (default: the one its configurations
        belong to).
    objective : int or str, optional
        Index or name of the objective of a multi-objective run, or ``"front"``:
        reaching its Pareto front, each configuration's share of the configurations
        that dominate it (each objective aggregated over instances first; as for an
        Optuna study, see :mod:`hpinsight._pareto`).
    instances : {"auto", "mean", "model"}, default="auto"
        How runs on several instances become one value per configuration.
        ``"mean"``: their mean. ``"model"``: as Hutter et al. (2014,
        Sec. 3.3), a random forest of the runs on (configuration,
        instance features) predicts each configuration's average over all
        training instances, which corrects for configurations having run
        on easier or harder instances. ``"auto"``: the model when
        configurations ran on different sets of two or more instances,
        else the mean.
    budget : float, optional
        Of a multi-fidelity run, analyse the runs at this budget alone (usually the
        largest, the one the tuned model is trained with); configurations never run at
        it are left out (counted in :attr:`excluded` as ``"other budget"``). Default:
        each configuration at its highest budget.

    Returns
    -------
    TrialHistory

    Examples
    --------
    >>> import hpinsight as hp
    >>> history = hp.adapters.from_smac("smac3_output/my-run/0")  # doctest: +SKIP
    """
    return history_from_smac(TrialHistory, source, configspace=configspace,
                             objective=objective, instances=instances, budget=budget)


def from_configspace(configspace: Any) -> SearchSpace:
    """Build a search space from a ``ConfigSpace.ConfigurationSpace`` (1.x).

    Uniform/normal float and integer hyperparameters become :class:`Float`
    / :class:`Int` (normal ones over their bounds, as ConfigSpace requires
    bounds), categorical and ordinal ones become :class:`Categorical`,
    constants become one-choice categoricals. Equals, NotEquals, In,
    GreaterThan and LessThan conditions and their And/Or conjunctions
    become :class:`Condition`/:class:`AnyOf`. Forbidden clauses are not
    part of the measure and are ignored by the analyses (a warning says so).
    """
    return space_from_configspace(SearchSpace, configspace)


def to_configspace(space: SearchSpace, *, seed: int | None = None) -> Any:
    """Return an equivalent ``ConfigSpace.ConfigurationSpace`` (1.x).
    """
    return space_to_configspace(space, seed=seed)


def space_from_optuna(distributions: Mapping[str, Any]) -> SearchSpace:
    """Build a search space from Optuna distributions.

    Parameters
    ----------
    distributions : mapping of str to optuna.distributions.BaseDistribution
        For example ``study.best_trial.distributions``.
    """
    return _space_from_distributions(SearchSpace, distributions)


def as_history(source: Any, func: str) -> TrialHistory:
    """``source`` as a TrialHistory: itself, or an Optuna study read with :func:`from_optuna`.

    Every analysis takes its ``history`` through this, so a study can be passed wherever a
    history can. Anything else raises a TypeError naming ``func`` and the ways in.
    """
    if isinstance(source, TrialHistory):
        return source
    if type(source).__module__.startswith("optuna"):
        return from_optuna(source)
    raise InvalidArgumentTypeError(
        f"The 'history' parameter of {func} must be an hpinsight TrialHistory or an "
        f"optuna.Study. Got {type(source).__name__} instead. For plain data, pass "
        "hp.TrialHistory(space, configs, y); for SMAC, hp.adapters.from_smac(facade), or "
        "hpinsight.integrations.smac.load_run(path) for a saved run.")


def as_objectives(source: Any, func: str) -> dict[str, TrialHistory] | None:
    """``source`` as one history per objective, when it has several: a multi-objective
    Optuna study (each objective read with :func:`from_optuna`, keyed by the name it
    goes by there), or a mapping of objective names to histories of the same trials.
    None for anything else (one objective, or what :func:`as_history` takes)."""
    if isinstance(source, Mapping):
        histories = dict(source)
        if len(histories) < 2 or not all(isinstance(k, str) and isinstance(h, TrialHistory)
                                          for k, h in histories.items()):
            raise InvalidArgumentTypeError(
                f"A mapping given to {func} must map at least two objective names (str) to "
                "hpinsight TrialHistory objects of the same trials, one per objective. Got "
                + ", ".join(f"{k!r}: {type(h).__name__}" for k, h in histories.items())
                + " instead; for one objective, pass its TrialHistory itself.")
        return histories
    if type(source).__module__.startswith("optuna") and len(getattr(source, "directions", ())) > 1:
        from ._optuna import objective_names

        return {name: from_optuna(source, objective=i)
                for i, name in enumerate(objective_names(source))}
    return None
