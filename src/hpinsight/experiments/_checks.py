"""Checking a tuning-risk experiment's inputs before anything runs: every problem named
with its fix, and the plan the runner follows."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._defaults import DefaultValues
from .._surrogate_risk import check_default_values
from .._validation import check_int
from ..exceptions import (
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
    InvalidSpaceError,
)
from ..space import Categorical, SearchSpace, native_value

if TYPE_CHECKING:

    pass

__all__ = ["FUNC", "Plan", "RunJob", "defaults_per_dataset", "validate"]

FUNC = "tuning_risk_experiment"

# scikit-learn scorers that are not in [0, 1] although their names do not start with "neg_"
_NOT_UNIT_SCORERS = frozenset({
    "adjusted_mutual_info_score", "adjusted_rand_score", "d2_absolute_error_score",
    "d2_brier_score", "d2_log_loss_score", "explained_variance", "matthews_corrcoef",
    "mutual_info_score", "positive_likelihood_ratio", "r2",
})


# --------------------------------------------------------------------------------------
# validation
@dataclass(frozen=True, slots=True)
class Plan:
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
class RunJob:
    dataset: Hashable
    key: int
    seed: int
    fixed: str | None
    default: Any


def validate(
    estimator: Any, space: Any, datasets: Any, *, params: Any, defaults: Any,
    n_default_configs: Any, default_top_n: Any, default_folds: Any, n_iter: Any,
    outer_folds: Any, inner_folds: Any, seeds: Any, scoring: Any, n_jobs: Any,
    progress: Any, random_state: Any,
) -> tuple[Plan, dict[Hashable, tuple[Any, Any]], tuple[str, ...], tuple[int, ...], Any]:
    if not isinstance(space, SearchSpace):
        raise InvalidArgumentTypeError(f"The 'space' parameter of {FUNC} must be an hpinsight SearchSpace. "
                        f"Got {type(space).__name__} instead.")
    if not (callable(getattr(estimator, "get_params", None))
            and callable(getattr(estimator, "set_params", None))):
        raise InvalidArgumentTypeError(f"The 'estimator' parameter of {FUNC} must be a scikit-learn "
                        f"estimator (with get_params and set_params). Got "
                        f"{type(estimator).__name__} instead.")
    available = estimator.get_params(deep=True)
    for name in space.names:
        if name not in available:
            raise InvalidSpaceError(
                f"{FUNC}: the space's parameter {name!r} is not a parameter of "
                f"{type(estimator).__name__}; its parameters are {sorted(available)!r}. Name "
                "the space's parameters as set_params expects them ('step__name' inside a "
                "Pipeline).", name=name)
    for label, value in (("n_default_configs", n_default_configs), ("default_top_n", default_top_n),
                         ("n_iter", n_iter)):
        check_int(value, label, FUNC, minimum=1)
    for label, value in (("default_folds", default_folds), ("outer_folds", outer_folds),
                         ("inner_folds", inner_folds)):
        check_int(value, label, FUNC, minimum=2)
    if defaults is None and default_top_n > n_default_configs:
        raise InvalidArgumentError(f"The 'default_top_n' parameter of {FUNC} must be at most "
                         f"n_default_configs={n_default_configs}. Got {default_top_n} instead.")
    if n_jobs is not None:
        check_int(n_jobs, "n_jobs", FUNC)
        if n_jobs == 0:
            raise InvalidArgumentError(f"The 'n_jobs' parameter of {FUNC} must be a positive int, -1 "
                             "(all cores) or None. Got 0 instead.")
    if not (isinstance(progress, bool | np.bool_) or callable(progress)):
        raise InvalidArgumentTypeError(f"The 'progress' parameter of {FUNC} must be True, False or a "
                                       f"callable progress(desc, done, total). Got {progress!r} "
                                       "instead.")
    seed_list = _check_seeds(seeds)
    tested = _check_params(params, space)
    data = _check_datasets(datasets, outer_folds)
    scorer, scoring_name = _check_scoring(scoring)
    if random_state is None:
        entropy = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        entropy = check_int(random_state, "random_state", FUNC, minimum=0)
    given: Any = None
    if defaults is not None:
        given = _check_defaults(defaults, tested, space, tuple(data))
    elif len(data) < 2:
        raise InvalidDataError(
            f"{FUNC}: leave-one-out defaults need at least two datasets, got "
            f"{len(data)}. Add datasets, or pass 'defaults' (a dict of parameter name to "
            "value, or a DefaultValues).")
    seed_params = tuple(
        k for k, v in available.items()
        if (k == "random_state" or k.endswith("__random_state")) and v is None and k not in space
    )
    plan = Plan(n_iter=n_iter, outer_folds=outer_folds, inner_folds=inner_folds, scorer=scorer,
                 scoring_name=scoring_name, entropy=entropy, seed_params=seed_params,
                 order=space.names_parents_first)
    return plan, data, tested, seed_list, given


def _check_seeds(seeds: Any) -> tuple[int, ...]:
    if isinstance(seeds, numbers.Integral):
        n: int = check_int(seeds, "seeds", FUNC, minimum=1)
        return tuple(range(n))
    if isinstance(seeds, np.ndarray) and seeds.ndim == 1:
        seeds = seeds.tolist()  # (an array of seeds is not a Sequence)
    if isinstance(seeds, Sequence) and not isinstance(seeds, str | bytes):
        out = tuple(check_int(s, "seeds", FUNC, minimum=0) for s in seeds)
        if not out or len(set(out)) != len(out):
            raise InvalidArgumentError(f"The 'seeds' parameter of {FUNC} must list one or more distinct "
                             f"non-negative ints. Got {list(seeds)!r} instead.")
        return out
    raise InvalidArgumentTypeError(f"The 'seeds' parameter of {FUNC} must be an int >= 1 (the number of "
                    f"seeds) or a sequence of ints. Got {seeds!r} instead.")


def _check_params(params: Any, space: SearchSpace) -> tuple[str, ...]:
    if params is None:
        return space.names
    if isinstance(params, str):
        params = [params]
    names = tuple(params)
    if not names:
        raise InvalidDataError(f"The 'params' parameter of {FUNC} is empty; name at least one "
                               "parameter to test, or pass None for all of them.")
    for name in names:
        if name not in space:
            raise InvalidDataError(f"The 'params' parameter of {FUNC} names {name!r}, which is "
                                   f"not in the space; valid names are {list(space.names)!r}.",
                                   name=str(name))
    if len(set(names)) != len(names):
        raise InvalidDataError(f"The 'params' parameter of {FUNC} lists a parameter twice: "
                               f"{list(names)!r}.")
    return names


def _check_datasets(datasets: Any, outer_folds: int) -> dict[Hashable, tuple[Any, Any]]:
    if not isinstance(datasets, Mapping):
        raise InvalidArgumentTypeError(f"The 'datasets' parameter of {FUNC} must be a mapping of dataset name "
                        f"to (X, y). Got {type(datasets).__name__} instead.")
    if not datasets:
        raise InvalidDataError(f"The 'datasets' parameter of {FUNC} is empty; pass at least one "
                               "dataset as {name: (X, y)}.")
    out: dict[Hashable, tuple[Any, Any]] = {}
    for name, pair in datasets.items():
        if not isinstance(pair, Sequence) or isinstance(pair, str | bytes) or len(pair) != 2:
            raise InvalidDataError(f"{FUNC}: dataset {name!r} must be a pair (X, y). Got "
                                   f"{type(pair).__name__} instead.")
        X, y = pair
        if not hasattr(X, "shape"):
            X = np.asarray(X)
        y = np.asarray(y)
        n = int(X.shape[0]) if len(X.shape) else 0
        if y.ndim != 1 or y.shape[0] != n:
            raise InvalidDataError(f"{FUNC}: dataset {name!r} has {n} rows in X but y of shape "
                                   f"{y.shape}; y must hold one target per row.")
        if n < outer_folds:
            raise InvalidDataError(f"{FUNC}: dataset {name!r} has {n} rows, fewer than "
                                   f"outer_folds={outer_folds}.")
        out[name] = (X, y)
    return out


def _check_scoring(scoring: Any) -> tuple[Callable[..., float], str]:
    from sklearn.metrics import get_scorer, get_scorer_names

    if callable(scoring):
        return scoring, getattr(scoring, "__name__", type(scoring).__name__)
    if not isinstance(scoring, str):
        raise InvalidArgumentTypeError(f"The 'scoring' parameter of {FUNC} must be a scikit-learn scorer name "
                        f"or a callable scorer. Got {scoring!r} instead.")
    if scoring.startswith("neg_") or scoring in _NOT_UNIT_SCORERS:
        raise InvalidArgumentError(
            f"The 'scoring' parameter of {FUNC} must be a score in [0, 1] (the risk is "
            f"1 - score). Got {scoring!r}, whose values are not in [0, 1]. Use a score such as "
            "'accuracy', 'balanced_accuracy', 'roc_auc_ovr' or 'f1_macro', or pass a callable "
            "scorer(estimator, X, y) that returns a score in [0, 1].")
    if scoring not in get_scorer_names():
        raise InvalidArgumentError(f"The 'scoring' parameter of {FUNC} must be a scikit-learn scorer "
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
                    f"{FUNC}: the DefaultValues have no leave-one-out defaults for dataset(s) "
                    f"{missing!r}; their studies are {list(defaults.per_study)!r}. Key the "
                    "studies by the dataset names, or pass a dict of defaults.")
        return defaults
    if not isinstance(defaults, Mapping):
        raise InvalidArgumentTypeError(f"The 'defaults' parameter of {FUNC} must be None, a DefaultValues or "
                        f"a dict of parameter name to value. Got {type(defaults).__name__} "
                        "instead.")
    unknown = [k for k in defaults if k not in space]
    if unknown:
        raise InvalidDataError(f"The 'defaults' parameter of {FUNC} names {unknown!r}, not in "
                               f"the space; valid names are {list(space.names)!r}.")
    return dict(defaults)


def defaults_per_dataset(
    given: Any, names: tuple[Hashable, ...], tested: tuple[str, ...], space: SearchSpace
) -> dict[Hashable, dict[str, Any]]:
    out: dict[Hashable, dict[str, Any]] = {}
    for name in names:
        values = given.for_study(name) if isinstance(given, DefaultValues) else given
        chosen: dict[str, Any] = {}
        for p in tested:
            if p not in values:
                learned = isinstance(given, DefaultValues)
                parents = sorted({q for c in space.conditions_of(p) for q in c.parents})
                why = (f": it is active only through {', '.join(map(repr, parents))}, and "
                       "none of the best configurations "
                       + ("of the other datasets " if given.per_study else "")
                       + "the defaults were learned from had it active"
                       if learned and parents else "")
                raise InvalidDataError(
                    f"{FUNC}: no default for {p!r} (dataset {name!r}){why}. Give the "
                    "defaults in 'defaults' (one for every parameter in 'params'), or "
                    "leave this parameter out of 'params'.", name=p)
            chosen[p] = values[p]
        check_default_values(space, chosen, f"{FUNC} (dataset {name!r})",
                             fix="or leave the parameter out of 'params'")
        # as the parameter's type: an int default of a float parameter (max_features = 1
        # in a TOML file) was passed on as an int, which scikit-learn reads as one feature
        # where the float space means all of them
        out[name] = {p: v if v is None and not isinstance(space[p], Categorical)
                     else native_value(space[p], v) for p, v in chosen.items()}
    return out
