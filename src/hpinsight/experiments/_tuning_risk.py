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
import threading
import zlib
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna

from .._defaults import DefaultValues, default_values
from .._execution import FitStore, progress_bar, run_jobs
from .._history import TrialHistory
from .._warn import warn
from ..exceptions import HPInsightWarning, InvalidArgumentTypeError, InvalidDataError
from ..space import Categorical, Float, Int, SearchSpace
from ._checks import FUNC, Plan, RunJob, defaults_per_dataset, validate
from ._records import FoldRecord, RunRecord, TuningRiskExperiment

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..space import Parameter

__all__ = ["CONFIG_KEY", "tuning_risk_experiment"]

_logger = logging.getLogger("hpinsight.integrations.optuna")
_logger.addHandler(logging.NullHandler())

#: Trial user attribute holding the configuration actually evaluated.
CONFIG_KEY = "hpinsight:config"

_SCORE_TOLERANCE = 1e-9

# purposes of derived seeds (first entry of the spawn key)
_CONFIGS, _DEFAULT_SPLIT, _DEFAULT_ESTIMATOR = 0, 1, 2
_OUTER, _INNER, _SAMPLER, _ESTIMATOR, _AUX = 3, 4, 5, 6, 7


# --------------------------------------------------------------------------------------
# the experiment


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
        never reuses another's results. Resuming needs ``random_state`` (with None,
        each call's fresh entropy is another experiment; a warning says so).

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
    plan, data, tested, seed_list, given = validate(
        estimator, space, datasets, params=params, defaults=defaults,
        n_default_configs=n_default_configs, default_top_n=default_top_n,
        default_folds=default_folds, n_iter=n_iter, outer_folds=outer_folds,
        inner_folds=inner_folds, seeds=seeds, scoring=scoring, n_jobs=n_jobs,
        progress=progress, random_state=random_state,
    )
    names = tuple(data)
    if client is not None and not isinstance(client, str) and not callable(
            getattr(client, "submit", None)):
        raise InvalidArgumentTypeError(
            f"The 'client' parameter of tuning_risk_experiment must be a dask.distributed "
            f"Client or a scheduler's address (such as 'tcp://10.0.0.5:8786'), or None to run "
            f"here. Got {type(client).__name__} instead.")
    if store is not None and random_state is None:
        warn(f"tuning_risk_experiment(store={str(store)!r}, random_state=None): every call "
             "draws a new random state, so a run again after a crash or a kill finds none "
             "of the fits stored before and starts over. Pass random_state=<int> to resume "
             "from the store.", HPInsightWarning, stacklevel=None)
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
        per_dataset = defaults_per_dataset(given, names, tested, space)

        jobs: list[tuple[Any, ...]] = []
        for name in names:
            X, y = data[name]
            for seed in seed_list:
                for fixed in (None, *tested):
                    default = None if fixed is None else per_dataset[name][fixed]
                    job = RunJob(dataset=name, key=_key(name), seed=seed, fixed=fixed,
                                  default=default)
                    jobs.append((estimator, space, X, y, job, plan))
        _logger.info("%s: %d runs of %d outer folds x %d trials", FUNC, len(jobs),
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
# the experiments
def _default_experiment(
    estimator: Any, space: SearchSpace, data: dict[Hashable, tuple[Any, Any]], plan: Plan,
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
    estimator: Any, space: SearchSpace, X: Any, y: Any, job: RunJob, plan: Plan
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
            f"{FUNC}: the scorer returned {score!r}, which is not in [0, 1]; the risk is "
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
    """Where and how the experiment's jobs run (see :mod:`hpinsight._execution`)."""

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
    with progress_bar(runner.progress, sum(weights), desc) as bar:
        return run_jobs(func, jobs, n_jobs=runner.n_jobs, client=runner.client,
                        store=runner.store, desc=desc, order=order,
                        done=lambda i: bar.update(weights[i]))


def _size(X: Any) -> float:
    """Rough cost of fitting on ``X``: its number of entries."""
    shape = getattr(X, "shape", None)  # (len() of a sparse matrix raises)
    return float(np.prod(shape if shape is not None else (len(X),)))


_quiet_lock = threading.Lock()
_quiet_holders = 0
_quiet_before: int | None = None


@contextlib.contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Hide Optuna's per-trial INFO lines; restore the caller's verbosity afterwards.

    Counted across threads (Optuna's verbosity is the process's): the first to enter
    keeps what it found, and the last to leave puts that back. Two experiments run in
    two threads each restored what it found on entry, and the later one to leave left
    Optuna at WARNING for good."""
    global _quiet_holders, _quiet_before
    with _quiet_lock:
        if _quiet_holders == 0:
            _quiet_before = optuna.logging.get_verbosity()
            optuna.logging.set_verbosity(max(_quiet_before, optuna.logging.WARNING))
        _quiet_holders += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_holders -= 1
            if _quiet_holders == 0 and _quiet_before is not None:
                optuna.logging.set_verbosity(_quiet_before)
                _quiet_before = None
