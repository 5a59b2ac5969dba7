"""The tuning-risk experiment of Weerts (2018), run with Optuna's random search.

Weerts, "Importance of tuning hyperparameters of machine learning algorithms",
Sec. 3.2-3.3 and 4.4-4.5. For an estimator, a search space and several datasets:

1. **Default values** (Sec. 3.2, 4.4; skipped when the caller gives defaults). Per
   dataset, ``n_default_configs`` configurations are drawn from the search space's own
   measure (uniform on each parameter's own scale: log-uniform for ``log=True``,
   uniform over integers and choices) and scored by ``default_folds``-fold
   cross-validation. One :class:`~hpinsight.TrialHistory` per dataset goes to
   :func:`~hpinsight.default_values`; each dataset then uses its *leave-one-out*
   default, computed from the other datasets' best configurations only.
2. **Fixed vs. non-fixed** (Sec. 3.3.1, 4.5). Per dataset and random-search seed, a
   nested cross-validation: an outer stratified split into training and test parts;
   on each outer training part a random search of ``n_iter`` configurations, each
   valued by its mean inner ``inner_folds``-fold cross-validated risk; the best one is
   refit on the outer training part and scored on the outer test part. The run's
   risk is the mean outer test risk. The *non-fixed* run tunes every parameter; the
   run *fixed at* parameter ``i`` holds ``i`` at its default and tunes the others.
3. The paired risks go to :func:`~hpinsight.tuning_risk` (Sec. 3.3.2).

**Risk.** A loss >= 0: ``1 - score`` for a scikit-learn scorer whose score lies in
``[0, 1]`` (accuracy, balanced accuracy, ROC AUC, F1, ...). Scorers named ``neg_*``
(negated losses) are refused, as are scorers known to leave ``[0, 1]``; a score outside
``[0, 1]`` at run time raises an error.

**Pairing.** The conditions of one (dataset, seed) share the outer folds, the inner
folds of every outer fold, the sampler seed of every outer fold and the estimator's
own seed. In every trial the sampler draws every active parameter in the same order in
all conditions; the fixed condition then *overwrites* parameter ``i`` with its default.
So trial ``t`` of the fixed run evaluates exactly the configuration of trial ``t`` of
the non-fixed run with ``i`` replaced by its default: the difference between the
conditions is the fixing and nothing else (common random numbers). The configuration
actually evaluated is stored in the trial's user attribute ``"hpinsight:config"`` and
in the returned records.

Where we differ from the paper and its reference code, and why:

* **Conditional spaces.** Activity while drawing is judged on the *drawn* values, so
  the draws stay identical across conditions even when ``i`` is a parent. If the
  default of ``i`` activates a child that the drawn value of ``i`` did not, the child
  gets a value from a separate generator seeded by the trial (the shared draws are
  untouched); a child the default deactivates is dropped.
* **Seeds.** Every random choice (folds, sampler seeds, configurations of step 1, the
  estimator's seed) is derived from ``(random_state, purpose, dataset name, seed,
  outer fold)`` with :class:`numpy.random.SeedSequence`; the dataset enters by a
  CRC-32 of its name, so results do not depend on the order of ``datasets``, on
  ``n_jobs`` or on Python's hash seed. The paper uses different seeds per dataset too.
* **The estimator's own randomness.** An estimator parameter ``random_state`` (also
  ``step__random_state`` inside a Pipeline) that is ``None`` and not tuned is set to a
  seed derived from (dataset, seed), the same for all conditions and configurations,
  so a run is reproducible and the conditions share the estimator's random numbers.
  A ``random_state`` the caller set is kept.
* **Splits.** Outer and inner folds are ``StratifiedKFold(shuffle=True)`` for binary
  and multiclass targets and ``KFold(shuffle=True)`` for any other target.
* **One non-fixed run per (dataset, seed)** serves every parameter, as in the paper's
  design; the experiment therefore has ``n_datasets * n_seeds * (1 + n_params)`` runs.
* **Sampler seeds differ per outer fold** (all derived from the search seed); the
  paper does not say whether its folds shared one.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import sys
import zlib
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna

from .._defaults import DefaultValues, default_values
from .._history import TrialHistory
from .._params import Categorical, Float, Int
from .._risk import tuning_risk
from .._shared import json_value, readonly
from .._space import SearchSpace
from .._validation import check_int
from ..exceptions import (
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
    InvalidSpaceError,
    UnknownNameError,
)
from ._execution import FitStore, run_jobs

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._params import Parameter
    from .._risk import TuningRiskResult

__all__ = ["CONFIG_KEY", "FoldRecord", "RunRecord", "TuningRiskExperiment", "tuning_risk_experiment"]

_FUNC = "tuning_risk_experiment"
_logger = logging.getLogger("hpinsight.integrations.optuna")
_logger.addHandler(logging.NullHandler())

#: Trial user attribute holding the configuration actually evaluated.
CONFIG_KEY = "hpinsight:config"

# scikit-learn scorers that are not in [0, 1] although their names do not start with "neg_"
_NOT_UNIT_SCORERS = frozenset({
    "adjusted_mutual_info_score", "adjusted_rand_score", "d2_absolute_error_score",
    "d2_brier_score", "d2_log_loss_score", "explained_variance", "matthews_corrcoef",
    "mutual_info_score", "positive_likelihood_ratio", "r2",
})
_SCORE_TOLERANCE = 1e-9

# purposes of derived seeds (first entry of the spawn key)
_CONFIGS, _DEFAULT_SPLIT, _DEFAULT_ESTIMATOR = 0, 1, 2
_OUTER, _INNER, _SAMPLER, _ESTIMATOR, _AUX = 3, 4, 5, 6, 7


# --------------------------------------------------------------------------------------
# records and the experiment
@dataclass(frozen=True, slots=True)
class FoldRecord:
    """One outer fold of a run: the random search on its training part and the test risk.

    Attributes
    ----------
    test_risk : float
        Risk of ``best_config`` refit on the outer training part, on the outer test part.
    best_config : dict of str to value
        The configuration with the lowest mean inner risk (the first one on ties).
    best_inner_risk : float
        Its mean inner cross-validated risk.
    trial_configs : tuple of dict, length n_iter
        The configurations evaluated, in trial order (as actually evaluated: in a fixed
        run the fixed parameter holds its default).
    trial_risks : tuple of float, length n_iter
        Their mean inner cross-validated risks.
    """

    test_risk: float
    best_config: dict[str, Any]
    best_inner_risk: float
    trial_configs: tuple[dict[str, Any], ...]
    trial_risks: tuple[float, ...]

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; the trials only with ``include_trials=True``."""
        out: dict[str, Any] = {
            "test_risk": self.test_risk,
            "best_config": _json_config(self.best_config),
            "best_inner_risk": self.best_inner_risk,
        }
        if include_trials:
            out["trial_configs"] = [_json_config(c) for c in self.trial_configs]
            out["trial_risks"] = list(self.trial_risks)
        return out


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One nested cross-validation run: a dataset, a search seed and a condition.

    Attributes
    ----------
    dataset : hashable
        The dataset's key in ``datasets``.
    seed : int
        The random-search seed (one of the experiment's ``seeds``).
    fixed : str or None
        The parameter held at its default, or ``None`` for the non-fixed run that tunes
        every parameter.
    default : value or None
        The value ``fixed`` was held at (``None`` for the non-fixed run).
    risk : float
        Mean outer test risk: the paper's ``R(θ_i^j)`` (fixed) or ``R(θ^*)`` (non-fixed).
    folds : tuple of FoldRecord
        The outer folds, in split order.
    """

    dataset: Hashable
    seed: int
    fixed: str | None
    default: Any
    risk: float
    folds: tuple[FoldRecord, ...]

    @property
    def condition(self) -> str:
        """``"non-fixed"`` or ``"fixed"``."""
        return "non-fixed" if self.fixed is None else "fixed"

    @property
    def best_configs(self) -> tuple[dict[str, Any], ...]:
        """The best configuration of every outer fold."""
        return tuple(f.best_config for f in self.folds)

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; the trials only with ``include_trials=True``."""
        return {
            "dataset": json_value(self.dataset),
            "seed": self.seed,
            "condition": self.condition,
            "fixed": self.fixed,
            "default": json_value(self.default),
            "risk": self.risk,
            "folds": [f.to_dict(include_trials=include_trials) for f in self.folds],
        }


@dataclass(frozen=True, slots=True)
class TuningRiskExperiment:
    """The runs of a tuning-risk experiment (see :func:`tuning_risk_experiment`).

    Attributes
    ----------
    records : tuple of RunRecord
        Every run, ordered by dataset (as given), seed, and condition (the non-fixed run
        first, then one run per parameter in ``params`` order).
    params : tuple of str
        The parameters tested.
    datasets : tuple of hashable
        Dataset keys, in the order given.
    seeds : tuple of int
        Random-search seeds.
    defaults : dict of hashable to dict of str to value
        Per dataset, the default each tested parameter was fixed at.
    default_values : DefaultValues or None
        The outcome of the default-value experiment, or ``None`` when the defaults were
        given.
    default_histories : dict of hashable to TrialHistory, or None
        Per dataset, the random configurations of the default-value experiment and
        their cross-validated risks (minimize), or ``None`` when defaults were given.
        They are ordinary histories: :func:`~hpinsight.fanova` accepts them.
    settings : dict
        The experiment's settings (JSON-safe).
    """

    records: tuple[RunRecord, ...]
    params: tuple[str, ...]
    datasets: tuple[Hashable, ...]
    seeds: tuple[int, ...]
    defaults: dict[Hashable, dict[str, Any]]
    default_values: DefaultValues | None
    default_histories: dict[Hashable, TrialHistory] | None
    settings: dict[str, Any]

    def __repr__(self) -> str:
        return (
            f"TuningRiskExperiment(n_datasets={len(self.datasets)}, n_seeds={len(self.seeds)}, "
            f"params={self.params!r}, n_runs={len(self.records)})"
        )

    @property
    def free(self) -> NDArray[np.float64]:
        """Risks of the non-fixed runs, shape (n_datasets * n_seeds,), by (dataset, seed)."""
        return readonly(np.array([r.risk for r in self.records if r.fixed is None]))

    @property
    def fixed(self) -> dict[str, NDArray[np.float64]]:
        """Per parameter, the risks of its fixed runs, in the order of :attr:`free`."""
        return {p: readonly(np.array([r.risk for r in self.records if r.fixed == p]))
                for p in self.params}

    def run(self, dataset: Hashable, seed: int, fixed: str | None = None) -> RunRecord:
        """The record of one run; ``fixed=None`` for the non-fixed run.

        Raises
        ------
        KeyError
            If there is no such run.
        """
        for r in self.records:
            if r.dataset == dataset and r.seed == seed and r.fixed == fixed:
                return r
        raise UnknownNameError(
            f"No run for dataset={dataset!r}, seed={seed!r}, fixed={fixed!r}; the datasets "
            f"are {list(self.datasets)!r}, the seeds {list(self.seeds)!r} and the parameters "
            f"{list(self.params)!r}."
        )

    def statistics(self, margin: float = 0.01, alpha: float = 0.05, **kwargs: Any) -> TuningRiskResult:
        """Tuning risk and Holm-corrected non-inferiority of every tested parameter.

        Parameters
        ----------
        margin : float, default=0.01
            Non-inferiority margin on the relative risk (the paper's 1 %).
        alpha : float, default=0.05
            Family-wise error rate.
        **kwargs
            Passed on to :func:`~hpinsight.tuning_risk` (``zero_method``, ``method``).

        Returns
        -------
        TuningRiskResult
        """
        return tuning_risk(self.fixed, self.free, margin=margin, alpha=alpha, **kwargs)

    def to_dict(self, *, include_trials: bool = False) -> dict[str, Any]:
        """JSON-safe representation; every trial only with ``include_trials=True``."""
        return {
            "params": list(self.params),
            "datasets": [json_value(d) for d in self.datasets],
            "seeds": list(self.seeds),
            "settings": dict(self.settings),
            "defaults": {str(d): _json_config(v) for d, v in self.defaults.items()},
            "default_values": None if self.default_values is None else self.default_values.to_dict(),
            "default_histories": None if self.default_histories is None else {
                str(d): h.to_dict() for d, h in self.default_histories.items()
            },
            "runs": [r.to_dict(include_trials=include_trials) for r in self.records],
        }

    def to_frame(self) -> Any:
        """One row per run (dataset, seed, condition, fixed, default, risk) as a DataFrame."""
        from .._optional import import_optional

        pd = import_optional("pandas", "TuningRiskExperiment.to_frame")
        return pd.DataFrame.from_records([
            {"dataset": r.dataset, "seed": r.seed, "condition": r.condition, "fixed": r.fixed,
             "default": r.default, "risk": r.risk}
            for r in self.records
        ])


# --------------------------------------------------------------------------------------
# the public function
def tuning_risk_experiment(
    estimator: Any,
    space: SearchSpace,
    datasets: Mapping[Hashable, tuple[Any, Any]],
    *,
    params: Sequence[str] | None = None,
    defaults: DefaultValues | Mapping[str, Any] | None = None,
    n_default_configs: int = 100,
    default_top_n: int = 10,
    default_folds: int = 5,
    n_iter: int = 100,
    outer_folds: int = 10,
    inner_folds: int = 5,
    seeds: int | Sequence[int] = 10,
    scoring: str | Callable[..., float] = "accuracy",
    n_jobs: int | None = None,
    progress: bool | Callable[[str, int, int], None] = True,
    random_state: int | None = 0,
    client: Any = None,
    store: str | Path | None = None,
) -> TuningRiskExperiment:
    """Run the fixed/non-fixed experiment of Weerts (2018) with Optuna's random search.

    See the module docstring for the design. The experiment has
    ``len(datasets) * n_seeds * (1 + len(params))`` runs, each
    ``outer_folds * (n_iter * inner_folds + 1)`` fits, plus
    ``len(datasets) * n_default_configs * default_folds`` fits when the defaults are
    computed.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit; a configuration is applied with ``set_params``, so the
        space's parameter names are the estimator's (``"svc__C"`` in a Pipeline).
    space : SearchSpace
        The space searched; its conditions are respected.
    datasets : mapping of hashable to (X, y)
        The datasets, by name. ``X`` is array-like of shape (n_samples, n_features)
        (or a DataFrame), ``y`` of shape (n_samples,).
    params : sequence of str, optional
        The parameters to test (default: every parameter of the space).
    defaults : DefaultValues or mapping of str to value, optional
        ``None`` (default): run the default-value experiment and use each dataset's
        leave-one-out defaults (needs two or more datasets). A ``DefaultValues``: its
        ``for_study(dataset)``, so its studies must be keyed by the dataset names (or
        it has a single study). A mapping of parameter name to value: the same defaults
        for every dataset.
    n_default_configs : int, default=100
        Random configurations per dataset in the default-value experiment (paper: 1000).
    default_top_n : int, default=10
        Best configurations per dataset that vote for the defaults (paper: 10).
    default_folds : int, default=5
        Cross-validation folds of the default-value experiment (paper: 10).
    n_iter : int, default=100
        Random-search trials per outer fold (paper: 100).
    outer_folds, inner_folds : int, default=10 and 5
        Folds of the nested cross-validation (paper: 10 and 5).
    seeds : int or sequence of int, default=10
        Random-search seeds: ``range(seeds)`` or the seeds themselves (paper: 10).
    scoring : str or callable, default="accuracy"
        A scikit-learn scorer name or a scorer ``scoring(estimator, X, y)`` whose score
        lies in ``[0, 1]`` (greater is better); the risk is ``1 - score``.
    n_jobs : int, optional
        Runs executed in parallel by joblib (``-1``: all cores; ``None``: one, unless a
        ``joblib.parallel_config`` says otherwise). The results do not depend on it.
    progress : bool or callable, default=True
        Show a progress bar on stderr (needs ``tqdm``; silently none without it). A
        callable is called instead as ``progress(desc, done, total)`` each time a job
        finishes, with the fits done and expected in the current stage ``desc`` (for a
        log, or a progress display of your own).
    random_state : int, optional
        Seeds everything; the same value gives the same experiment. ``None`` draws fresh
        entropy, recorded in ``settings["random_state"]``.
    client : dask.distributed.Client or str, optional
        Run the jobs on this Dask cluster (a client, or a scheduler address such as
        ``"tcp://10.0.0.5:8786"``) instead of joblib on this machine; ``n_jobs`` is then
        not used. The results are identical: every job carries its own seeds. A job on
        a worker that dies runs again elsewhere.
    store : str or pathlib.Path, optional
        A SQLite file that keeps every finished job's result as it completes. Run the
        experiment again with the same ``store`` after a crash or a kill, and only the
        missing jobs run; results already stored are read back, not recomputed. Keys
        fingerprint the estimator, data, seeds and settings, so a changed experiment
        never reuses another's results.

    Returns
    -------
    TuningRiskExperiment

    Raises
    ------
    InvalidSpaceError
        A parameter of the space is not a parameter of the estimator.
    InvalidDataError
        No datasets, malformed datasets, unknown ``params``, missing or invalid defaults.
    ValueError, TypeError
        Invalid settings (fewer than two folds, no seeds, unsuitable ``scoring``, ...).

    Examples
    --------
    >>> import hpinsight as hp
    >>> from sklearn.datasets import load_iris, load_wine
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from hpinsight.experiments import tuning_risk_experiment
    >>> space = hp.SearchSpace([hp.Int("max_depth", 1, 8),
    ...                         hp.Categorical("criterion", ["gini", "entropy"])])
    >>> experiment = tuning_risk_experiment(
    ...     DecisionTreeClassifier(), space,
    ...     {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)},
    ...     n_default_configs=10, default_top_n=3, default_folds=2,
    ...     n_iter=3, outer_folds=2, inner_folds=2, seeds=2, progress=False)
    >>> experiment
    TuningRiskExperiment(n_datasets=2, n_seeds=2, params=('max_depth', 'criterion'), n_runs=12)
    >>> experiment.free.shape, experiment.fixed["max_depth"].shape
    ((4,), (4,))
    >>> [row.param for row in experiment.statistics(margin=0.01).rows]
    ['max_depth', 'criterion']
    """
    plan, data, tested, seed_list, given = _validate(
        estimator, space, datasets, params=params, defaults=defaults,
        n_default_configs=n_default_configs, default_top_n=default_top_n,
        default_folds=default_folds, n_iter=n_iter, outer_folds=outer_folds,
        inner_folds=inner_folds, seeds=seeds, scoring=scoring, n_jobs=n_jobs,
        progress=progress, random_state=random_state,
    )
    names = tuple(data)
    runner = _Runner(n_jobs=n_jobs, progress=progress, client=client,
                     store=None if store is None else FitStore(store))
    with _quiet_optuna():
        found: DefaultValues | None = None
        histories: dict[Hashable, TrialHistory] | None = None
        if given is None:
            histories = _default_experiment(estimator, space, data, plan, n_default_configs,
                                            default_folds, runner)
            found = default_values(histories, top_n=default_top_n)
            given = found
        per_dataset = _defaults_per_dataset(given, names, tested, space)

        jobs: list[tuple[Any, ...]] = []
        for name in names:
            X, y = data[name]
            for seed in seed_list:
                for fixed in (None, *tested):
                    default = None if fixed is None else per_dataset[name][fixed]
                    job = _RunJob(dataset=name, key=_key(name), seed=seed, fixed=fixed,
                                  default=default)
                    jobs.append((estimator, space, X, y, job, plan))
        _logger.info("%s: %d runs of %d outer folds x %d trials", _FUNC, len(jobs),
                     plan.outer_folds, plan.n_iter)
        fits = plan.outer_folds * (plan.n_iter * plan.inner_folds + 1)  # per tuning run
        records = _map(_tuning_run, jobs, runner, "tuning runs (fits)",
                       weights=[fits] * len(jobs), costs=[_size(job[2]) for job in jobs])

    settings: dict[str, Any] = {
        "n_default_configs": n_default_configs if found is not None else None,
        "default_top_n": default_top_n if found is not None else None,
        "default_folds": default_folds if found is not None else None,
        "defaults_source": "leave-one-out" if found is not None else "given",
        "n_iter": plan.n_iter, "outer_folds": plan.outer_folds, "inner_folds": plan.inner_folds,
        "scoring": plan.scoring_name, "risk": f"1 - {plan.scoring_name}",
        "random_state": plan.entropy,
        "estimator_seeded": list(plan.seed_params),
    }
    return TuningRiskExperiment(
        records=tuple(records), params=tested, datasets=names, seeds=seed_list,
        defaults=per_dataset, default_values=found, default_histories=histories,
        settings=settings,
    )


# --------------------------------------------------------------------------------------
# validation
@dataclass(frozen=True, slots=True)
class _Plan:
    """Settings every worker needs (picklable)."""

    n_iter: int
    outer_folds: int
    inner_folds: int
    scorer: Callable[..., float]
    scoring_name: str
    entropy: int
    seed_params: tuple[str, ...]
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _RunJob:
    dataset: Hashable
    key: int
    seed: int
    fixed: str | None
    default: Any


def _validate(
    estimator: Any, space: Any, datasets: Any, *, params: Any, defaults: Any,
    n_default_configs: Any, default_top_n: Any, default_folds: Any, n_iter: Any,
    outer_folds: Any, inner_folds: Any, seeds: Any, scoring: Any, n_jobs: Any,
    progress: Any, random_state: Any,
) -> tuple[_Plan, dict[Hashable, tuple[Any, Any]], tuple[str, ...], tuple[int, ...], Any]:
    if not isinstance(space, SearchSpace):
        raise InvalidArgumentTypeError(f"The 'space' parameter of {_FUNC} must be an hpinsight SearchSpace. "
                        f"Got {type(space).__name__} instead.")
    if not (callable(getattr(estimator, "get_params", None))
            and callable(getattr(estimator, "set_params", None))):
        raise InvalidArgumentTypeError(f"The 'estimator' parameter of {_FUNC} must be a scikit-learn "
                        f"estimator (with get_params and set_params). Got "
                        f"{type(estimator).__name__} instead.")
    available = estimator.get_params(deep=True)
    for name in space.names:
        if name not in available:
            raise InvalidSpaceError(
                f"{_FUNC}: the space's parameter {name!r} is not a parameter of "
                f"{type(estimator).__name__}; its parameters are {sorted(available)!r}. Name "
                "the space's parameters as set_params expects them ('step__name' inside a "
                "Pipeline).", name=name)
    for label, value in (("n_default_configs", n_default_configs), ("default_top_n", default_top_n),
                         ("n_iter", n_iter)):
        check_int(value, label, _FUNC, minimum=1)
    for label, value in (("default_folds", default_folds), ("outer_folds", outer_folds),
                         ("inner_folds", inner_folds)):
        check_int(value, label, _FUNC, minimum=2)
    if defaults is None and default_top_n > n_default_configs:
        raise InvalidArgumentError(f"The 'default_top_n' parameter of {_FUNC} must be at most "
                         f"n_default_configs={n_default_configs}. Got {default_top_n} instead.")
    if n_jobs is not None:
        check_int(n_jobs, "n_jobs", _FUNC)
        if n_jobs == 0:
            raise InvalidArgumentError(f"The 'n_jobs' parameter of {_FUNC} must be a positive int, -1 "
                             "(all cores) or None. Got 0 instead.")
    if not (isinstance(progress, bool | np.bool_) or callable(progress)):
        raise InvalidArgumentTypeError(f"The 'progress' parameter of {_FUNC} must be True, False or a "
                                       f"callable progress(desc, done, total). Got {progress!r} "
                                       "instead.")
    seed_list = _check_seeds(seeds)
    tested = _check_params(params, space)
    data = _check_datasets(datasets, outer_folds)
    scorer, scoring_name = _check_scoring(scoring)
    if random_state is None:
        entropy = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        entropy = check_int(random_state, "random_state", _FUNC, minimum=0)
    given: Any = None
    if defaults is not None:
        given = _check_defaults(defaults, tested, space, tuple(data))
    elif len(data) < 2:
        raise InvalidDataError(
            f"{_FUNC}: leave-one-out defaults need at least two datasets, got "
            f"{len(data)}. Add datasets, or pass 'defaults' (a dict of parameter name to "
            "value, or a DefaultValues).")
    seed_params = tuple(
        k for k, v in available.items()
        if (k == "random_state" or k.endswith("__random_state")) and v is None and k not in space
    )
    plan = _Plan(n_iter=n_iter, outer_folds=outer_folds, inner_folds=inner_folds, scorer=scorer,
                 scoring_name=scoring_name, entropy=entropy, seed_params=seed_params,
                 order=space.names_parents_first)
    return plan, data, tested, seed_list, given


def _check_seeds(seeds: Any) -> tuple[int, ...]:
    if isinstance(seeds, numbers.Integral):
        n: int = check_int(seeds, "seeds", _FUNC, minimum=1)
        return tuple(range(n))
    if isinstance(seeds, Sequence) and not isinstance(seeds, str | bytes):
        out = tuple(check_int(s, "seeds", _FUNC, minimum=0) for s in seeds)
        if not out or len(set(out)) != len(out):
            raise InvalidArgumentError(f"The 'seeds' parameter of {_FUNC} must list one or more distinct "
                             f"non-negative ints. Got {list(seeds)!r} instead.")
        return out
    raise InvalidArgumentTypeError(f"The 'seeds' parameter of {_FUNC} must be an int >= 1 (the number of "
                    f"seeds) or a sequence of ints. Got {seeds!r} instead.")


def _check_params(params: Any, space: SearchSpace) -> tuple[str, ...]:
    if params is None:
        return space.names
    if isinstance(params, str):
        params = [params]
    names = tuple(params)
    if not names:
        raise InvalidDataError(f"The 'params' parameter of {_FUNC} is empty; name at least one "
                               "parameter to test, or pass None for all of them.")
    for name in names:
        if name not in space:
            raise InvalidDataError(f"The 'params' parameter of {_FUNC} names {name!r}, which is "
                                   f"not in the space; valid names are {list(space.names)!r}.",
                                   name=str(name))
    if len(set(names)) != len(names):
        raise InvalidDataError(f"The 'params' parameter of {_FUNC} lists a parameter twice: "
                               f"{list(names)!r}.")
    return names


def _check_datasets(datasets: Any, outer_folds: int) -> dict[Hashable, tuple[Any, Any]]:
    if not isinstance(datasets, Mapping):
        raise InvalidArgumentTypeError(f"The 'datasets' parameter of {_FUNC} must be a mapping of dataset name "
                        f"to (X, y). Got {type(datasets).__name__} instead.")
    if not datasets:
        raise InvalidDataError(f"The 'datasets' parameter of {_FUNC} is empty; pass at least one "
                               "dataset as {name: (X, y)}.")
    out: dict[Hashable, tuple[Any, Any]] = {}
    for name, pair in datasets.items():
        if not isinstance(pair, Sequence) or isinstance(pair, str | bytes) or len(pair) != 2:
            raise InvalidDataError(f"{_FUNC}: dataset {name!r} must be a pair (X, y). Got "
                                   f"{type(pair).__name__} instead.")
        X, y = pair
        if not hasattr(X, "shape"):
            X = np.asarray(X)
        y = np.asarray(y)
        n = int(X.shape[0]) if len(X.shape) else 0
        if y.ndim != 1 or y.shape[0] != n:
            raise InvalidDataError(f"{_FUNC}: dataset {name!r} has {n} rows in X but y of shape "
                                   f"{y.shape}; y must hold one target per row.")
        if n < outer_folds:
            raise InvalidDataError(f"{_FUNC}: dataset {name!r} has {n} rows, fewer than "
                                   f"outer_folds={outer_folds}.")
        out[name] = (X, y)
    return out


def _check_scoring(scoring: Any) -> tuple[Callable[..., float], str]:
    from sklearn.metrics import get_scorer, get_scorer_names

    if callable(scoring):
        return scoring, getattr(scoring, "__name__", type(scoring).__name__)
    if not isinstance(scoring, str):
        raise InvalidArgumentTypeError(f"The 'scoring' parameter of {_FUNC} must be a scikit-learn scorer name "
                        f"or a callable scorer. Got {scoring!r} instead.")
    if scoring.startswith("neg_") or scoring in _NOT_UNIT_SCORERS:
        raise InvalidArgumentError(
            f"The 'scoring' parameter of {_FUNC} must be a score in [0, 1] (the risk is "
            f"1 - score). Got {scoring!r}, whose values are not in [0, 1]. Use a score such as "
            "'accuracy', 'balanced_accuracy', 'roc_auc_ovr' or 'f1_macro', or pass a callable "
            "scorer(estimator, X, y) that returns a score in [0, 1].")
    if scoring not in get_scorer_names():
        raise InvalidArgumentError(f"The 'scoring' parameter of {_FUNC} must be a scikit-learn scorer "
                         f"name (sklearn.metrics.get_scorer_names()). Got {scoring!r} instead.")
    return get_scorer(scoring), scoring


def _check_defaults(
    defaults: Any, tested: tuple[str, ...], space: SearchSpace, names: tuple[Hashable, ...]
) -> Any:
    if isinstance(defaults, DefaultValues):
        if defaults.per_study:
            missing = [n for n in names if n not in defaults.per_study]
            if missing:
                raise InvalidDataError(
                    f"{_FUNC}: the DefaultValues have no leave-one-out defaults for dataset(s) "
                    f"{missing!r}; their studies are {list(defaults.per_study)!r}. Key the "
                    "studies by the dataset names, or pass a dict of defaults.")
        return defaults
    if not isinstance(defaults, Mapping):
        raise InvalidArgumentTypeError(f"The 'defaults' parameter of {_FUNC} must be None, a DefaultValues or "
                        f"a dict of parameter name to value. Got {type(defaults).__name__} "
                        "instead.")
    unknown = [k for k in defaults if k not in space]
    if unknown:
        raise InvalidDataError(f"The 'defaults' parameter of {_FUNC} names {unknown!r}, not in "
                               f"the space; valid names are {list(space.names)!r}.")
    return dict(defaults)


def _defaults_per_dataset(
    given: Any, names: tuple[Hashable, ...], tested: tuple[str, ...], space: SearchSpace
) -> dict[Hashable, dict[str, Any]]:
    out: dict[Hashable, dict[str, Any]] = {}
    for name in names:
        values = given.for_study(name) if isinstance(given, DefaultValues) else given
        chosen: dict[str, Any] = {}
        for p in tested:
            if p not in values:
                raise InvalidDataError(
                    f"{_FUNC}: no default for {p!r} (dataset {name!r}). Give one in "
                    "'defaults', or leave the parameter out of 'params'.", name=p)
            if not space[p].contains(values[p]):
                raise InvalidDataError(
                    f"{_FUNC}: the default {values[p]!r} of {p!r} is not a valid value of the "
                    f"space's {space[p]!r}.", name=p)
            chosen[p] = values[p]
        out[name] = chosen
    return out


# --------------------------------------------------------------------------------------
# the experiments
def _default_experiment(
    estimator: Any, space: SearchSpace, data: dict[Hashable, tuple[Any, Any]], plan: _Plan,
    n_configs: int, folds: int, runner: _Runner,
) -> dict[Hashable, TrialHistory]:
    chunk = 10
    jobs: list[tuple[Any, ...]] = []
    weights: list[int] = []
    owners: list[Hashable] = []
    configs: dict[Hashable, list[dict[str, Any]]] = {}
    for name, (X, y) in data.items():
        key = _key(name)
        configs[name] = space.sample(n_configs, seed=_derive(plan.entropy, _CONFIGS, key))
        splits = list(_splitter(y, folds, _derive(plan.entropy, _DEFAULT_SPLIT, key)).split(X, y))
        seeded = {p: _derive(plan.entropy, _DEFAULT_ESTIMATOR, key) for p in plan.seed_params}
        for start in range(0, n_configs, chunk):
            part = configs[name][start : start + chunk]
            jobs.append((estimator, part, seeded, X, y, splits, plan.scorer))
            weights.append(len(part) * folds)  # fits
            owners.append(name)
    results = _map(_evaluate_configs, jobs, runner, "default values (fits)",
                   weights=weights, costs=[_size(job[3]) * len(job[1]) for job in jobs])
    risks: dict[Hashable, list[float]] = {name: [] for name in data}
    for name, part in zip(owners, results, strict=True):
        risks[name].extend(part)
    return {
        name: TrialHistory(space, tuple(configs[name]), np.asarray(risks[name]),
                           direction="minimize",
                           objective_name=f"risk (1 - {plan.scoring_name})")
        for name in data
    }


def _evaluate_configs(
    estimator: Any, configs: list[dict[str, Any]], seeded: dict[str, int], X: Any, y: Any,
    splits: list[tuple[Any, Any]], scorer: Callable[..., float],
) -> list[float]:
    return [_cv_risk(estimator, {**seeded, **c}, X, y, splits, scorer) for c in configs]


def _tuning_run(
    estimator: Any, space: SearchSpace, X: Any, y: Any, job: _RunJob, plan: _Plan
) -> RunRecord:
    e = plan.entropy
    seeded = {p: _derive(e, _ESTIMATOR, job.key, job.seed) for p in plan.seed_params}
    outer = _splitter(y, plan.outer_folds, _derive(e, _OUTER, job.key, job.seed))
    folds: list[FoldRecord] = []
    with _quiet_optuna():
        for k, (train, test) in enumerate(outer.split(X, y)):
            X_tr, y_tr = _take(X, train), y[train]
            inner = list(_splitter(y_tr, plan.inner_folds,
                                   _derive(e, _INNER, job.key, job.seed, k)).split(X_tr, y_tr))
            sampler_seed = _derive(e, _SAMPLER, job.key, job.seed, k)

            def objective(trial: optuna.Trial, X_tr: Any = X_tr, y_tr: Any = y_tr,
                          inner: Any = inner, sampler_seed: int = sampler_seed) -> float:
                config = _draw(trial, space, plan.order, job.fixed, job.default,
                               aux_seed=(e, _AUX, sampler_seed, trial.number))
                trial.set_user_attr(CONFIG_KEY, config)
                return _cv_risk(estimator, {**seeded, **config}, X_tr, y_tr, inner, plan.scorer)

            study = optuna.create_study(
                direction="minimize", sampler=optuna.samplers.RandomSampler(seed=sampler_seed))
            study.optimize(objective, n_trials=plan.n_iter)
            trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
            configs = tuple(dict(t.user_attrs[CONFIG_KEY]) for t in trials)
            values = tuple(float(t.value) for t in trials)  # type: ignore[arg-type]
            best = int(np.argmin(values))
            model = _fit(estimator, {**seeded, **configs[best]}, X_tr, y_tr)
            test_risk = _risk(plan.scorer, model, _take(X, test), y[test])
            folds.append(FoldRecord(test_risk=test_risk, best_config=configs[best],
                                    best_inner_risk=values[best], trial_configs=configs,
                                    trial_risks=values))
    risk = float(np.mean([f.test_risk for f in folds]))
    return RunRecord(dataset=job.dataset, seed=job.seed, fixed=job.fixed, default=job.default,
                     risk=risk, folds=tuple(folds))


# --------------------------------------------------------------------------------------
# drawing configurations
def _draw(
    trial: optuna.Trial, space: SearchSpace, order: tuple[str, ...], fixed: str | None,
    default: Any, *, aux_seed: tuple[int, ...],
) -> dict[str, Any]:
    """Draw a configuration; in a fixed run, overwrite ``fixed`` after the shared draws."""
    drawn: dict[str, Any] = {}
    for name in order:
        if space.is_active(name, drawn):
            drawn[name] = _suggest(trial, space[name])
    if fixed is None:
        return drawn
    used: dict[str, Any] = {}
    for name in order:
        if not space.is_active(name, used):
            continue
        if name == fixed:
            used[name] = default
        elif name in drawn:
            used[name] = drawn[name]
        else:  # activated by the default only: draw it without touching the shared stream
            seed = _derive(*aux_seed, zlib.crc32(name.encode()))
            used[name] = SearchSpace([space[name]]).sample(1, seed=seed)[0][name]
    return used


def _suggest(trial: optuna.Trial, param: Parameter) -> Any:
    if isinstance(param, Categorical):
        choices = param.choices
        if all(c is None or isinstance(c, bool | int | float | str) for c in choices):
            return trial.suggest_categorical(param.name, list(choices))  # type: ignore[arg-type]
        # Optuna stores only plain values; draw the index of any other choice
        return choices[trial.suggest_categorical(param.name, list(range(len(choices))))]
    if isinstance(param, Int):
        return trial.suggest_int(param.name, param.low, param.high, step=param.step, log=param.log)
    assert isinstance(param, Float)
    return trial.suggest_float(param.name, param.low, param.high, step=param.step, log=param.log)


# --------------------------------------------------------------------------------------
# fitting and scoring
def _fit(estimator: Any, config: Mapping[str, Any], X: Any, y: Any) -> Any:
    from sklearn.base import clone

    model = clone(estimator)
    model.set_params(**config)
    return model.fit(X, y)


def _risk(scorer: Callable[..., float], model: Any, X: Any, y: Any) -> float:
    return _score_risk(float(scorer(model, X, y)))


def _score_risk(score: float) -> float:
    if not (-_SCORE_TOLERANCE <= score <= 1.0 + _SCORE_TOLERANCE):
        raise InvalidDataError(
            f"{_FUNC}: the scorer returned {score!r}, which is not in [0, 1]; the risk is "
            "1 - score, so use a score in [0, 1] such as 'accuracy' or 'balanced_accuracy'.")
    return min(1.0, max(0.0, 1.0 - score))


def _cv_risk(
    estimator: Any, config: Mapping[str, Any], X: Any, y: Any,
    splits: Sequence[tuple[Any, Any]], scorer: Callable[..., float],
) -> float:
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    # one fresh clone per fold, fit on the given splits in order, in this process
    # (n_jobs=1 even inside a joblib context); a failing fit or scorer raises
    scores = cross_val_score(clone(estimator).set_params(**config), X, y, scoring=scorer,
                             cv=splits, n_jobs=1, error_score="raise")
    return float(np.mean([_score_risk(float(score)) for score in scores]))


def _take(X: Any, rows: NDArray[np.intp]) -> Any:
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def _splitter(y: Any, n_splits: int, seed: int) -> Any:
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.utils.multiclass import type_of_target

    if type_of_target(y) in ("binary", "multiclass"):
        return StratifiedKFold(n_splits, shuffle=True, random_state=seed)
    return KFold(n_splits, shuffle=True, random_state=seed)


# --------------------------------------------------------------------------------------
# seeds, parallelism, progress, logging
def _key(name: Hashable) -> int:
    """A stable number for a dataset name (independent of Python's hash seed)."""
    return zlib.crc32(str(name).encode("utf-8"))


def _derive(entropy: int, *keys: int) -> int:
    """A 32-bit seed for ``keys`` (a purpose and identifiers) under ``entropy``."""
    sequence = np.random.SeedSequence(entropy, spawn_key=tuple(int(k) for k in keys))
    return int(sequence.generate_state(1)[0])


@dataclass(frozen=True, slots=True)
class _Runner:
    """Where and how the experiment's jobs run (see :mod:`._execution`)."""

    n_jobs: int | None
    progress: bool | Callable[[str, int, int], None]
    client: Any
    store: FitStore | None


def _map(
    func: Callable[..., Any], jobs: list[tuple[Any, ...]], runner: _Runner, desc: str, *,
    weights: list[int], costs: list[float],
) -> list[Any]:
    """``[func(*job) for job in jobs]``, advancing a progress bar (with tqdm's ETA) by
    ``weights``: the fits each job does.

    Jobs are dispatched most expensive first (by the rough ``costs``) so that no slow
    job starts last while the other workers idle; the results come back in job order.
    """
    order = sorted(range(len(jobs)), key=lambda i: -costs[i])
    with _progress_bar(runner.progress, sum(weights), desc) as bar:
        return run_jobs(func, jobs, n_jobs=runner.n_jobs, client=runner.client,
                        store=runner.store, desc=desc, order=order,
                        done=lambda i: bar.update(weights[i]))


def _size(X: Any) -> float:
    """Rough cost of fitting on ``X``: its number of entries."""
    shape = getattr(X, "shape", (len(X),))
    return float(np.prod(shape))


class _NoBar:
    def update(self, n: int) -> None:
        pass


class _Reporter:
    """Counts finished fits and hands them to a user's ``progress(desc, done, total)``."""

    def __init__(self, report: Callable[[str, int, int], None], total: int, desc: str) -> None:
        self.report, self.total, self.desc, self.done = report, total, desc, 0

    def update(self, n: int) -> None:
        self.done += n
        self.report(self.desc, self.done, self.total)


@contextlib.contextmanager
def _progress_bar(enabled: bool | Callable[[str, int, int], None], total: int,
                  desc: str) -> Iterator[Any]:
    if callable(enabled):
        yield _Reporter(enabled, total, desc)
        return
    bar: Any = None
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            bar = None
        else:
            bar = tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True)
    try:
        yield bar if bar is not None else _NoBar()
    finally:
        if bar is not None:
            bar.close()


@contextlib.contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Hide Optuna's per-trial INFO lines; restore the caller's verbosity afterwards."""
    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(max(before, optuna.logging.WARNING))
    try:
        yield
    finally:
        optuna.logging.set_verbosity(before)


def _json_config(config: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): json_value(v) for k, v in config.items()}

