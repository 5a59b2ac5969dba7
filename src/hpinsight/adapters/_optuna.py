"""Optuna studies in: distributions to a :class:`~hpinsight.SearchSpace`, trials to a history.

Optuna 4.x and 5.x are supported.

Only Optuna's public API is used, and Optuna is imported inside the function,
so importing this module does not import Optuna.

Mapped (in the mapping's order):

* ``FloatDistribution(low, high, log, step)`` -> :class:`~hpinsight.Float`
  with the same ``log`` and ``step`` (this includes the deprecated
  ``UniformDistribution``, ``LogUniformDistribution`` and
  ``DiscreteUniformDistribution``, which subclass it);
* ``IntDistribution(low, high, log, step)`` -> :class:`~hpinsight.Int`
  (including ``IntUniformDistribution`` and ``IntLogUniformDistribution``).
  Optuna already moves ``high`` down to the last value on the step grid; if it
  is still off the grid, hpinsight does the same;
* ``CategoricalDistribution(choices)`` -> :class:`~hpinsight.Categorical`;
* a ``FloatDistribution`` or ``IntDistribution`` with a single value
  (``low == high``, or a step wider than the range) -> a one-choice
  ``Categorical``, because ``Float``/``Int`` need ``low < high``.

Not mapped: other distribution classes (``InvalidSpaceError``). Optuna has no
defaults and no conditions, so the space has neither; a define-by-run search
space whose parameters differ between trials must be passed as one mapping
that covers all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._optional import import_optional
from .._pareto import FRONT, FRONT_VALUE_NAME, dominated_share
from .._warn import warn
from ..exceptions import (
    ChangedDistributionWarning,
    ExcludedTrialsWarning,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDataError,
    InvalidSpaceError,
)
from ..space import Categorical, Float, Int, outside_space

if TYPE_CHECKING:
    from types import ModuleType

    from .._history import TrialHistory
    from .._sampling import SamplingRecord
    from ..space import Parameter, SearchSpace

__all__ = ["front_values", "history_from_study", "merge_distributions", "objective_names",
           "resolve_objective", "sampling_of", "space_from_optuna", "value_getter"]

# Where hpinsight's ShrinkingSampler keeps its restriction (study user attributes) and
# what each trial was sampled under (trial system attributes).
RESTRICTION_KEY = "hpinsight:restriction"
DECISIONS_KEY = "hpinsight:decisions"
TRIAL_KEY = "hpinsight:sampled_under"


def space_from_optuna(cls: type[SearchSpace], distributions: Mapping[str, Any]) -> SearchSpace:
    """Build a search space from Optuna distributions.

    Parameters
    ----------
    cls : type
        :class:`~hpinsight.SearchSpace` or a subclass; the return type.
    distributions : mapping of str to optuna.distributions.BaseDistribution
        For example ``study.best_trial.distributions``. See the module
        docstring for what each distribution becomes.

    Returns
    -------
    SearchSpace
        One parameter per entry, in the mapping's order, without conditions.

    Raises
    ------
    InvalidSpaceError
        If ``distributions`` is not a mapping of names to Optuna
        distributions, is empty, or holds a distribution hpinsight cannot
        convert.
    """
    optuna = import_optional("optuna", "SearchSpace.from_optuna")
    given: object = distributions  # checked at run time: callers may pass anything
    if not isinstance(given, Mapping):
        hint = (
            " Pass study.best_trial.distributions (or trial.distributions) instead of the study."
            if isinstance(given, optuna.Study)
            else ""
        )
        raise InvalidSpaceError(
            "SearchSpace.from_optuna expects a mapping from parameter name to Optuna "
            f"distribution, such as study.best_trial.distributions. Got "
            f"{type(given).__name__} instead.{hint}"
        )
    if not distributions:
        raise InvalidSpaceError(
            "SearchSpace.from_optuna got no distributions; pass the distributions of a trial "
            "that has parameters, e.g. study.best_trial.distributions."
        )
    params = [_param_from_distribution(optuna, name, d) for name, d in distributions.items()]
    return cls(params)


def _param_from_distribution(optuna: ModuleType, name: Any, dist: Any) -> Parameter:
    D = optuna.distributions
    if not isinstance(name, str):
        raise InvalidSpaceError(
            f"Parameter names must be strings. Got {name!r} ({type(name).__name__}) as a key "
            "of the distributions mapping."
        )
    if isinstance(dist, D.FloatDistribution):
        # single(): low == high, or a step wider than the range (exact, in decimal)
        if dist.single():
            return Categorical(name, (float(dist.low),))
        step = None if dist.step is None else float(dist.step)
        return Float(name, float(dist.low), float(dist.high), log=bool(dist.log), step=step)
    if isinstance(dist, D.IntDistribution):
        ilow, ihigh, istep = int(dist.low), int(dist.high), int(dist.step)
        if dist.single():
            return Categorical(name, (ilow,))
        ihigh = ilow + (ihigh - ilow) // istep * istep if istep > 0 else ihigh
        return Int(name, ilow, ihigh, log=bool(dist.log), step=istep)
    if isinstance(dist, D.CategoricalDistribution):
        # choices Optuna keeps apart but that compare equal (1 and 1.0) are one choice
        return Categorical(name, _distinct(dist.choices))
    raise InvalidSpaceError(
        f"Parameter {name!r} has a {type(dist).__name__}, which hpinsight cannot convert. "
        "Use FloatDistribution, IntDistribution or CategoricalDistribution (what "
        "trial.suggest_float/suggest_int/suggest_categorical create).",
        name=name,
    )


def _distinct(choices: Sequence[Any]) -> tuple[Any, ...]:
    """``choices`` without repeats, the first of those that compare equal kept; a bool
    stays apart from a number (``True == 1``), as the space's categoricals keep them."""
    unique: dict[tuple[bool, Any], Any] = {}
    for c in choices:
        unique.setdefault((isinstance(c, bool), c), c)
    return tuple(unique.values())


def _same_distribution(a: Any, b: Any) -> bool:
    """Whether two of a parameter's Optuna distributions are one: equal, and for a
    categorical also by repr, as Optuna finds choices ``(0, 1)`` equal to
    ``(False, True)``. Only a categorical's repr is read: reading every trial's cost a
    1,000-trial study of ten floats 0.045 s a read, about half of reading it."""
    if a is b:
        return True
    if a != b:
        return False
    return not hasattr(a, "choices") or repr(a) == repr(b)


def merge_distributions(optuna: ModuleType, name: str, dists: Sequence[Any]) -> Any:
    """The smallest Optuna distribution that holds every value of ``dists``.

    Categoricals merge into the union of their choices (first-seen order);
    numeric ones into the range from the lowest ``low`` to the highest
    ``high``, on a log scale only if all were, and on a step grid only if all
    share one (ints otherwise fall back to step 1, floats to no step). A mix of
    categorical and numeric distributions cannot be merged.
    """
    D = optuna.distributions
    if len(dists) == 1:
        return dists[0]
    categorical = [isinstance(d, D.CategoricalDistribution) for d in dists]
    if all(categorical):
        # (0, 1) merged with (False, True) gave (0, 1), which then refused the trials
        # that had True
        return D.CategoricalDistribution(_distinct([c for d in dists for c in d.choices]))
    if any(categorical):
        raise InvalidDataError(
            f"Parameter {name!r} was suggested both as a categorical and as a number during the "
            "study, so its trials cannot share one axis. Give the changed parameter a new name "
            "in the objective, or analyse the trials before and after the change separately "
            "(params=...).",
            name=name,
        )
    low = min(d.low for d in dists)
    high = max(d.high for d in dists)
    log = all(d.log for d in dists)
    steps = {d.step for d in dists}
    # on one grid: each low a whole number of steps above the lowest (0.3 / 0.1 is
    # 2.9999999999999996, whose remainder modulo 1 is next to 1, not to 0)
    aligned = len(steps) == 1 and None not in steps and all(
        abs((k := (d.low - low) / d.step) - round(k)) <= 1e-9 * max(1.0, abs(k)) for d in dists
    )
    if all(isinstance(d, D.IntDistribution) for d in dists):
        step = dists[0].step if aligned and not log else 1
        return D.IntDistribution(int(low), int(high), log=log, step=step)
    fstep = float(dists[0].step) if aligned and not log else None
    if fstep is not None:
        high = low + fstep * math.floor((high - low) / fstep + 1e-9)
    return D.FloatDistribution(float(low), float(high), log=log, step=fstep)


def history_from_study(
    cls: type[TrialHistory],
    study: Any,
    *,
    target: Callable[[Any], float] | None = None,
    objective: int | str | None = None,
    direction: Literal["minimize", "maximize"] | None = None,
    params: Sequence[str] | None = None,
    on_change: Callable[[list[str]], object] | None = None,
    on_outside: Callable[[list[str]], object] | None = None,
    allow_empty: bool = False,
) -> TrialHistory | None:
    """Implement :func:`hpinsight.adapters.from_optuna` (see there).

    ``on_change`` receives the names of parameters whose distribution changed, and
    ``on_outside`` the trials left out for a value the search space cannot hold, instead
    of a warning (warnings cannot be caught safely off the main thread); ``allow_empty``
    returns None instead of raising when no COMPLETE trial has parameters.
    """
    func = "hp.adapters.from_optuna"
    optuna = import_optional("optuna", func)
    if not isinstance(study, optuna.Study):
        raise InvalidArgumentTypeError(
            f"The 'study' parameter of {func} must be an optuna.Study. Got "
            f"{type(study).__name__} instead; use optuna.load_study(study_name=..., "
            "storage=...) to open a stored study."
        )
    directions = list(study.directions)
    value_of, analysed_direction, objective_name = value_getter(
        func, directions, target=target, objective=objective, names=objective_names(study)
    )
    if direction is not None:
        if direction not in ("minimize", "maximize"):
            raise InvalidArgumentError(
                f"The 'direction' parameter of {func} must be 'minimize' or 'maximize'. "
                f"Got {direction!r} instead."
            )
        analysed_direction = direction

    State = optuna.trial.TrialState
    trials = study.get_trials(deepcopy=False)
    excluded: dict[str, int] = {}
    complete = []
    for t in trials:
        if t.state == State.COMPLETE:
            complete.append(t)
        else:
            excluded[t.state.name] = excluded.get(t.state.name, 0) + 1

    seen: dict[str, list[Any]] = {}
    for t in complete:
        for name, dist in t.distributions.items():
            known = seen.setdefault(name, [])
            if not any(_same_distribution(d, dist) for d in known):
                known.append(dist)
    if params is not None:
        params = _check_params(func, params, seen)
    names = list(seen) if params is None else list(params)
    changed = {n: seen[n] for n in names if len(seen[n]) > 1}
    merged = {n: merge_distributions(optuna, n, seen[n]) for n in names}
    if changed and on_change is not None:
        on_change(list(changed))
    elif changed:
        listed = "; ".join(f"{n!r} had {len(d)} distributions" for n, d in changed.items())
        warn(
            f"The search space changed during the study ({listed}). hpinsight analyses each "
            "such parameter over the union of its distributions; to analyse one version only, "
            "pass the trials before or after the change separately.",
            ChangedDistributionWarning,
            stacklevel=None,  # the user's line, however it was reached
        )
    if not merged and allow_empty:
        return None
    if not merged:
        # (COMPLETE trials of an objective that suggests nothing are counted too: the
        # breakdown said "5 trial(s) in all: none" of five of them)
        counts = {**excluded, **({"COMPLETE without parameters": len(complete)} if complete else {})}
        raise InvalidDataError(
            f"{func} found no COMPLETE trial with parameters in study {study.study_name!r} "
            f"({len(trials)} trial(s) in all: "
            + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none")
            + "). Run more trials, or pass a study that has finished some; an objective "
            "that suggests no parameter has nothing to analyse."
        )
    space = space_from_optuna(cls.space_type, merged)

    configs: list[dict[str, Any]] = []
    values: list[float] = []
    ids: list[int] = []
    kept: list[Any] = []  # the trials behind values
    n_nonfinite = 0
    keep = set(names)
    # Optuna runs an enqueued value outside its range or off its step grid with a warning
    # only; the space cannot hold it, so such a trial is left out (before the Pareto
    # front's shares, which every trial's value depends on), counted and named
    outside = _outside(space, [t.params for t in complete], [t.number for t in complete], keep)
    if outside:
        complete = [t for t in complete if t.number not in outside]
    if value_of is None:  # the Pareto front: every trial's value depends on all of them
        finite, shares = front_values(complete, directions)
        share_of = {id(t): v for t, v in zip(finite, shares, strict=True)}
        value_of = lambda t: share_of.get(id(t), math.nan)  # noqa: E731
    n_none = 0
    for t in complete:
        given: Any = value_of(t)
        if given is None:  # (a target reading a value some trials did not log)
            n_none += 1
            continue
        try:
            v = float(given)
        except (TypeError, ValueError):
            raise InvalidDataError(
                f"The value of trial {t.number} is {given!r}, not a number: a target= must "
                "return a number for each trial (or None to leave the trial out).") from None
        if not np.isfinite(v):
            n_nonfinite += 1
            continue
        cfg = t.params if params is None else {k: x for k, x in t.params.items() if k in keep}
        configs.append(cfg)
        values.append(v)
        ids.append(t.number)
        kept.append(t)
    if n_nonfinite:
        excluded["non-finite value"] = n_nonfinite
    if n_none:
        excluded["no value (target gave None)"] = n_none
    if outside:
        excluded[OUTSIDE] = len(outside)
        named = [f"trial {number} ({what})" for number, what in outside.items()]
        if on_outside is not None:
            on_outside(named)
        else:
            warn(f"{func}: {outside_text(study.study_name, named)}",
                          ExcludedTrialsWarning, stacklevel=None)
    unseen = [n for n in names if configs and not any(n in c for c in configs)]
    if unseen:
        # only in trials left out (a branch that always diverged, an enqueued value out of
        # range): the space had them, no trial analysed gave them a value, and the
        # history refused them, naming DataFrame columns
        left = ", ".join(f"{n}: {k}" for n, k in sorted(excluded.items())) or "none"
        if params is not None:
            raise InvalidDataError(
                f"{func}: {unseen} appear only in trials that are left out ({left}), so no "
                "trial analysed gives them a value; leave them out of params.")
        warn(f"{func}: {unseen} appear only in trials that are left out ({left}), so they "
             "are not analysed.", ExcludedTrialsWarning, stacklevel=None)
        space = space_from_optuna(cls.space_type,
                                  {n: d for n, d in merged.items() if n not in unseen})
    if target is not None and direction is None:
        analysed_direction = _target_direction(directions, kept, values)
    return cls(
        space,
        tuple(configs),
        np.asarray(values, dtype=np.float64),
        direction=analysed_direction,
        trial_ids=tuple(ids),
        excluded=excluded,
        objective_name=objective_name,
        sampling=sampling_of(study, kept, changed={
            n: tuple(distribution_text(optuna, d) for d in dists) for n, dists in changed.items()}),
        # a study of several objectives gives a history per objective: the label says which
        label=f"study {study.study_name!r}" + (f", {objective_name}" if len(directions) > 1 else ""),
        loader=_loader(target, objective, direction, params, study=_study_expression(study)),
    )


def _study_expression(study: Any) -> str:
    """The call that loads ``study`` again from its storage (a password in an RDB URL
    shown as ``***``), or ``"study"`` for storages that cannot be named (in memory)."""
    storage = getattr(study, "_storage", None)
    backend = getattr(storage, "_backend", None)
    url = getattr(backend, "url", None)  # an RDBStorage behind Optuna's cache
    if isinstance(url, str):
        from sqlalchemy.engine import make_url  # comes with Optuna

        try:
            shown = make_url(url).render_as_string(hide_password=True)
        except Exception:  # a URL SQLAlchemy cannot parse back: not written out
            return "study"
        where = repr(shown)
    elif isinstance(path := getattr(backend, "_file_path", None), str):  # a journal file
        where = (f"optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend("
                 f"{path!r}))")
    else:
        return "study"
    return f"optuna.load_study(study_name={study.study_name!r}, storage={where})"


def _loader(target: Any, objective: int | str | None, direction: str | None,
            params: Sequence[str] | None, *, study: str = "study") -> str:
    """The call that reads the same trials again (:attr:`TrialHistory.loader`); a
    ``target`` function cannot be written out, so it stands as ``...``."""
    args = [study]
    if target is not None:
        args.append("target=...")
    elif objective is not None:
        args.append(f"objective={objective!r}")
    if direction is not None:
        args.append(f"direction={direction!r}")
    if params is not None:
        args.append(f"params={list(params)!r}")
    return f"hp.adapters.from_optuna({', '.join(args)})"


def distribution_text(optuna: ModuleType, dist: Any) -> str:
    """An Optuna distribution in words: ``"int in [8, 64], log"``, ``"one of ('a', 'b')"``."""
    D = optuna.distributions
    if isinstance(dist, D.CategoricalDistribution):
        return f"one of {tuple(dist.choices)!r}"
    kind = "int" if isinstance(dist, D.IntDistribution) else "float"
    text = f"{kind} in [{dist.low:g}, {dist.high:g}]"
    if dist.log:
        text += ", log"
    if dist.step is not None and not (kind == "int" and dist.step == 1):
        text += f", step {dist.step:g}"
    return text


def sampling_of(study: Any, trials: Sequence[Any],
                changed: Mapping[str, tuple[str, ...]] | None = None) -> SamplingRecord | None:
    """The restriction of ``study`` (hpinsight's ShrinkingSampler) and, over ``trials``, how
    many were sampled with each parameter held fixed or in a narrowed range, with the
    parameters whose distribution ``changed`` (as text); None when the study was never
    restricted and nothing changed."""
    from .._sampling import SamplingRecord

    changed = dict(changed or {})
    attrs = study.user_attrs
    stored = attrs.get(RESTRICTION_KEY)
    decisions = attrs.get(DECISIONS_KEY)
    decisions = [d for d in decisions if isinstance(d, Mapping)] if isinstance(
        decisions, list) else []
    if not isinstance(stored, Mapping) and not decisions:
        return SamplingRecord(changed=changed) if changed else None
    stored = stored if isinstance(stored, Mapping) else {}
    fixed: Mapping[str, Any] = stored["fixed"] if isinstance(stored.get("fixed"), Mapping) else {}
    ranges = {k: (v[0], v[1]) for k, v in dict(stored.get("ranges") or {}).items()
              if isinstance(v, list | tuple) and len(v) == 2}
    n_held: dict[str, int] = {}
    n_narrowed: dict[str, int] = {}
    explored: dict[int, tuple[str, ...]] = {}
    latest: dict[str, tuple[int, bool]] = {}  # per held name: its latest held trial, and held?
    marked = False
    for t in trials:
        under = t.system_attrs.get(TRIAL_KEY)
        if not isinstance(under, Mapping):
            continue
        marked = True
        # values the user enqueued (``study.enqueue_trial``) are theirs, not the sampler's:
        # one off the held value says nothing of whether the sampler still holds it (one
        # such trial, the latest, released a fixed parameter for good)
        given = t.system_attrs.get("fixed_params")
        given = given if isinstance(given, Mapping) else {}
        for name, value in dict(under.get("fixed") or {}).items():
            if name in t.params and _same(t.params[name], value):
                n_held[name] = n_held.get(name, 0) + 1
            if (name in t.params and name not in given
                    and t.number >= latest.get(name, (-1, True))[0]):
                latest[name] = (t.number, _same(t.params[name], value))
        for name, bounds in dict(under.get("ranges") or {}).items():
            # (a range that misses the trial's distribution is ignored for it)
            if name in t.params and _meets(t.distributions.get(name), bounds):
                n_narrowed[name] = n_narrowed.get(name, 0) + 1
        # the parameters the trial moved: active, and away from the value they were held at
        # or outside the range they were narrowed to when it ran (an enqueued trial, or a
        # spread value that lands on the held one or in the range, moved nothing); a trial
        # marked before the mark kept that, against the restriction in force
        spread = under.get("explored")
        if isinstance(spread, list | tuple) and spread:
            held = under.get("held")
            was_fixed, was_ranges = ((dict(held.get("fixed") or {}),
                                      dict(held.get("ranges") or {}))
                                     if isinstance(held, Mapping) else (fixed, ranges))
            moved = tuple(str(n) for n in spread if n in t.params
                          and not (n in was_fixed and _same(t.params[n], was_fixed[n]))
                          and not (n in was_ranges and _within(t.params[n], was_ranges[n])))
            if moved:
                explored[t.number] = moved
    # trials carry the mark from 0.1 on; without any, the counts are unknown
    # if a restriction was decided before the last analysed trial
    last = max((t.number for t in trials), default=-1)
    known = marked or not any(
        d.get("action") == "fix" and (d.get("params") or d.get("ranges"))
        and not (isinstance(d.get("after_trial"), int) and d["after_trial"] >= last)
        for d in decisions)
    # nor where the latest trials were drawn without the restriction in force: two or
    # more analysed trials after it, and after the last one that carries its mark, carry
    # none (the sampler that drew them ignores it: a study loaded without its
    # ShrinkingSampler), whatever earlier trials were held. One may have been running
    # when the restriction was written
    since = stored.get("since")
    began = since.get("after_trial") if isinstance(since, Mapping) else None
    if (fixed or ranges) and isinstance(began, int):
        held_last = max((t.number for t in trials if t.number > began
                         and isinstance(t.system_attrs.get(TRIAL_KEY), Mapping)), default=began)
        if sum(t.number > held_last for t in trials) >= 2:
            known = False
    return SamplingRecord(fixed=dict(fixed), ranges=ranges, decisions=tuple(decisions),
                          n_held=n_held if known else None,
                          n_narrowed=n_narrowed if known else None, changed=changed,
                          explored=explored,
                          unheld=tuple(sorted(n for n, (_, same) in latest.items()
                                              if not same and n in fixed)))


def _meets(dist: Any, bounds: Any) -> bool:
    """Whether a narrowed range ``bounds`` overlaps numeric distribution ``dist`` (one
    the sampler could narrow); True where either cannot be read."""
    try:
        low, high = float(bounds[0]), float(bounds[1])
        return bool(low <= dist.high and dist.low <= high)
    except (AttributeError, TypeError, ValueError, IndexError):
        return True


def _within(value: Any, bounds: tuple[float, float]) -> bool:
    try:
        return bounds[0] <= float(value) <= bounds[1]
    except (TypeError, ValueError):
        return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
        except (TypeError, ValueError):
            return False
    return bool(a == b)


def _sense(direction: Any) -> Literal["minimize", "maximize"]:
    """An Optuna ``StudyDirection`` in hpinsight's words."""
    return "maximize" if direction.name == "MAXIMIZE" else "minimize"


def _target_direction(
    directions: list[Any], trials: list[Any], values: list[float]
) -> Literal["minimize", "maximize"]:
    """Which way is better for a ``target``: the study's direction if it has one objective;
    with several, the direction of the objective the target reproduces on every trial
    (Optuna's ``plot_param_importances`` passes ``target=lambda t: t.values[i]`` per
    objective); else "minimize"."""
    if len(directions) == 1:
        return _sense(directions[0])
    matches = [i for i in range(len(directions))
               if trials and all(t.values is not None and float(t.values[i]) == v
                                 for t, v in zip(trials, values, strict=True))]
    return _sense(directions[matches[0]]) if len(matches) == 1 else "minimize"


def objective_names(study: Any) -> list[str]:
    """The names a study's objectives go by: the study's metric names when it has them
    (``study.set_metric_names``), else ``values_0``, ``values_1``, ... as in
    ``study.trials_dataframe()`` (``value`` for a single objective).

    Each name stands for one objective: a metric name that two objectives share, or that
    is another objective's ``values_j`` or the Pareto front's ``"front"``, gets its own
    ``values_i`` added (``"loss (values_0)"``). Keyed by name, two objectives called
    ``"loss"`` were one, and a report left the first out and fixed the parameter that
    drove it."""
    n = len(study.directions)
    named = getattr(study, "metric_names", None)
    if not named or len(named) != n:
        return ["value"] if n == 1 else [f"values_{i}" for i in range(n)]
    names = [str(m) for m in named]
    taken = {FRONT, *(f"values_{i}" for i in range(n))}

    def clashes(i: int, name: str) -> bool:
        return names.count(name) > 1 or (name in taken and name != f"values_{i}")

    return [f"{name} (values_{i})" if clashes(i, name) else name for i, name in enumerate(names)]


def resolve_objective(
    func: str, directions: Sequence[Any], objective: int | str | None, names: Sequence[str] = (),
) -> int | str:
    """The objective to analyse: an index, or ``FRONT`` for reaching the Pareto front.

    ``objective`` is an index, a name of :func:`objective_names` (``values_1``, a metric
    name) or ``"front"``; ``None`` means the one objective of a single-objective study
    and the front of a multi-objective one (as Optuna's own evaluators do)."""
    n = len(directions)
    if objective is None:
        return FRONT if n > 1 else 0
    if isinstance(objective, bool) or not isinstance(objective, int | str):
        raise InvalidArgumentTypeError(
            f"The 'objective' parameter of {func} must be an int index, an objective's name or "
            f"{FRONT!r}. Got {objective!r} instead.")
    if isinstance(objective, str):
        known = list(names) or (["value"] if n == 1 else [f"values_{i}" for i in range(n)])
        aliases = {name: i for i, name in enumerate(known)}
        aliases.update({f"values_{i}": i for i in range(n)})
        if n == 1:
            aliases["value"] = 0
        if objective == FRONT and n > 1:
            return FRONT
        if objective in aliases:
            return aliases[objective]
        choices = ", ".join(repr(a) for a in [*known, *([FRONT] if n > 1 else [])])
        raise InvalidArgumentError(
            f"The 'objective' parameter of {func} must name one of this study's objectives "
            f"({choices}) or be an index. Got {objective!r} instead.")
    if not 0 <= objective < n:
        raise InvalidArgumentError(
            f"The 'objective' parameter of {func} must be an index in [0, {n - 1}] for this "
            f"study with {n} objective(s). Got {objective} instead.")
    return objective


def value_getter(
    func: str,
    directions: list[Any],
    *,
    target: Callable[[Any], float] | None,
    objective: int | str | None,
    names: Sequence[str] = (),
) -> tuple[Callable[[Any], float] | None, Literal["minimize", "maximize"], str]:
    """How to read the analysed value off a trial (``None`` for the Pareto front, which
    is computed from all the trials at once: :func:`front_values`), which way is better,
    and the value's name."""
    if target is not None:
        if not callable(target):
            raise InvalidArgumentTypeError(
                f"The 'target' parameter of {func} must be a callable taking a FrozenTrial "
                f"and returning a float. Got {type(target).__name__} instead."
            )
        return target, "minimize", "target"
    chosen = resolve_objective(func, directions, objective, names)
    if chosen == FRONT:
        return None, "minimize", FRONT_VALUE_NAME
    i = int(chosen)
    if len(directions) == 1:
        return (lambda t: t.value), _sense(directions[0]), "objective"
    label = names[i] if names else f"objective {i}"
    return (lambda t: t.values[i]), _sense(directions[i]), label


def front_values(trials: Sequence[Any], directions: Sequence[Any]) -> tuple[list[Any], list[float]]:
    """The trials whose every objective is finite, and for each the share of them that
    dominate it (:func:`hpinsight._pareto.dominated_share`)."""
    kept = [t for t in trials if t.values is not None
            and all(math.isfinite(float(v)) for v in t.values)]
    if not kept:
        return [], []
    senses = [_sense(d) for d in directions]
    shares = dominated_share([[float(v) for v in t.values] for t in kept], senses)
    return kept, [float(x) for x in shares]


def _check_params(func: str, params: Any, seen: Mapping[str, Any]) -> list[str]:
    if isinstance(params, str) or not isinstance(params, Sequence):
        raise InvalidArgumentTypeError(
            f"The 'params' parameter of {func} must be a list of parameter names. "
            f"Got {params!r} instead."
        )
    if not all(isinstance(p, str) for p in params):
        raise InvalidArgumentTypeError(
            f"The 'params' parameter of {func} must hold parameter names as strings. "
            f"Got {params!r} instead."
        )
    missing = [p for p in params if p not in seen]
    if missing:
        raise InvalidArgumentError(
            f"No COMPLETE trial of the study has parameter(s) {missing!r}, so their importance "
            f"cannot be assessed. Parameters seen in COMPLETE trials: {sorted(seen)!r}."
        )
    return list(dict.fromkeys(params))


#: How a trial left out for a value the search space cannot hold is counted.
OUTSIDE = "value outside the search space"


def outside_text(study_name: str, outside: Sequence[str]) -> str:
    """The sentence that names the trials left out for a value the space cannot hold."""
    shown = "; ".join(outside[:5]) + (f"; and {len(outside) - 5} more" if len(outside) > 5 else "")
    return (f"{len(outside)} trial(s) of study {study_name!r} have a value the search space "
            f"cannot hold, and are left out ({shown}). Optuna runs an enqueued configuration "
            "outside its range or off its step grid with a warning only; to analyse such "
            "trials, suggest the parameter over a range (and step) that holds them.")


def _outside(space: SearchSpace, params: Sequence[Mapping[str, Any]], numbers: Sequence[int],
             keep: set[str]) -> dict[int, str]:
    """The trials (their ``params`` and ``numbers``) with a value of a numerical parameter
    in ``keep`` that ``space``'s encoding refuses (out of its bounds or off its step grid),
    by trial number, each with the first such value (``name=value, not a value of
    <param>``); one vectorized pass per parameter."""
    found: dict[int, str] = {}
    for param in space.params:
        if param.name not in keep or not isinstance(param, Float | Int):
            continue
        values = [p.get(param.name) for p in params]
        for k in np.flatnonzero(outside_space(param, values)):
            found.setdefault(numbers[int(k)],
                             f"{param.name}={values[int(k)]!r}, not a value of {param!r}")
    return found
