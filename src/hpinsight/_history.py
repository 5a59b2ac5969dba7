"""A trial history: the configurations an optimizer evaluated and what they scored.

:class:`TrialHistory` is the one data type optimizer adapters produce and the
analyses consume. It knows no optimizer: ``TrialHistory.from_optuna`` is a thin
door into the Optuna adapter, which imports Optuna lazily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NoReturn

import numpy as np

from ._sampling import SamplingRecord
from ._shared import readonly
from ._validation import as_objective, check_choice
from .exceptions import InvalidArgumentError, InvalidArgumentTypeError, InvalidDataError
from .space import Categorical, SearchSpace, empty_cell, is_integral

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["TrialHistory"]


@dataclass(frozen=True, slots=True, eq=False)  # holds arrays: == is identity
class TrialHistory:
    """Configurations, their objective values and what was left out.

    Parameters
    ----------
    space : SearchSpace
        The search space the configurations come from.
    configs : sequence of mapping
        One mapping of parameter name to native value per trial; a parameter
        missing from a mapping is inactive in that trial.
    y : array-like of shape (n_trials,)
        Objective values, finite.
    direction : {"minimize", "maximize"}, default="minimize"
        Which way is better.
    trial_ids : sequence of int, optional
        The optimizer's identifier of each trial (Optuna's ``trial.number``);
        defaults to ``0 .. n_trials - 1``.
    excluded : mapping of str to int, optional
        How many trials the adapter left out, by reason (for example
        ``{"PRUNED": 3, "non-finite value": 1}``).
    objective_name : str, default="objective"
        What ``y`` is, for reports (an objective name or "target").
    sampling : SamplingRecord, optional
        How the optimizer was restricted while it sampled these trials (fixed or
        narrowed parameters, the decisions, forbidden clauses); adapters fill it,
        reports show it. The analyses themselves do not read it.
    label : str, optional
        What the trials are, in words (``"study 'demo'"``, ``"SMAC run out/svm/0"``);
        adapters fill it, and a report without a ``label`` of its own takes it as its
        heading.
    loader : str, optional
        The Python call that reads these trials again, with every option that shaped
        them (``"hp.adapters.from_optuna(study, objective='loss')"``,
        ``"load_run('out/svm/0', budget=9.0)"``); adapters fill it, and a report's code
        to reproduce it starts from it.

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([hp.Float("x", 0, 1)])
    >>> history = hp.TrialHistory(space, [{"x": 0.1}, {"x": 0.7}], [1.0, 0.5])
    >>> history.n_trials, history.n_excluded
    (2, 0)
    """

    space: SearchSpace
    configs: tuple[Mapping[str, Any], ...]
    y: NDArray[np.float64]
    direction: Literal["minimize", "maximize"] = "minimize"
    trial_ids: tuple[int, ...] = ()
    excluded: Mapping[str, int] = field(default_factory=dict)
    objective_name: str = "objective"
    sampling: SamplingRecord | None = None
    label: str | None = None
    loader: str | None = None
    _encoded: NDArray[np.float64] | None = field(default=None, init=False, repr=False, compare=False)
    #: The search-space class adapters build spaces with (so they need not import it).
    space_type: ClassVar[type[SearchSpace]] = SearchSpace

    def __post_init__(self) -> None:
        func = "TrialHistory"
        if not isinstance(self.space, SearchSpace):
            raise InvalidArgumentTypeError(
                f"The 'space' parameter of {func} must be an hpinsight SearchSpace. "
                f"Got {type(self.space).__name__} instead."
            )
        configs = tuple(MappingProxyType(c)
                        for c in _config_rows(self.configs, func, self.space))
        _check_same_index(self.configs, self.y, func)
        y = as_objective(self.y, len(configs), func)
        _check_every_parameter_given(self.space, configs, func)
        if not np.isfinite(y).all():
            raise InvalidDataError(
                f"The 'y' parameter of {func} must hold finite values only. Got "
                f"{int((~np.isfinite(y)).sum())} NaN/infinite value(s); leave those trials out "
                "and count them in 'excluded'."
            )
        # (an array or a Series of ids has no truth value: its length says whether it is empty)
        ids = (_trial_ids(self.trial_ids, func) if self.trial_ids is not None and len(self.trial_ids)
               else tuple(range(len(configs))))
        if len(ids) != len(configs):
            raise InvalidArgumentError(
                f"The 'trial_ids' parameter of {func} must have one entry per configuration "
                f"({len(configs)}). Got {len(ids)} instead."
            )
        if self.sampling is not None and not isinstance(self.sampling, SamplingRecord):
            raise InvalidArgumentTypeError(
                f"The 'sampling' parameter of {func} must be an hpinsight SamplingRecord or "
                f"None. Got {type(self.sampling).__name__} instead."
            )
        for name in ("label", "loader"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise InvalidArgumentTypeError(
                    f"The {name!r} parameter of {func} must be a str or None. Got "
                    f"{type(getattr(self, name)).__name__} instead."
                )
        direction = check_choice(self.direction, "direction", func, ("minimize", "maximize"))
        excluded = _excluded(self.excluded, func)
        # encoded now, so a value the space cannot hold (out of range, a choice it does not
        # have, a name it lacks) is refused here and not at the first analysis; a DataFrame
        # column by column, much faster than from the rows
        frame = hasattr(self.configs, "columns") and hasattr(self.configs, "copy")
        X = self.space.encode(self.configs if frame else configs)
        object.__setattr__(self, "_encoded", readonly(X))
        object.__setattr__(self, "configs", configs)
        object.__setattr__(self, "y", readonly(y.astype(np.float64, copy=True)))
        object.__setattr__(self, "trial_ids", ids)
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "excluded", MappingProxyType(excluded))

    def __reduce__(self) -> tuple[Any, ...]:
        # read-only mapping views do not pickle; the fields go as plain values, with the
        # encoding, and come back without validating and encoding again (what was checked
        # when the history was made: a live callback sends a history to its refit child)
        return (
            _unpickle,
            (type(self), self.space, [dict(c) for c in self.configs], np.array(self.y),
             self.direction, self.trial_ids, dict(self.excluded), self.objective_name,
             self.sampling, self.label, self.loader, np.array(self.encoded())),
        )

    def __repr__(self) -> str:
        return (
            f"TrialHistory(n_trials={self.n_trials}, n_params={len(self.space)}, "
            f"n_excluded={self.n_excluded}, direction={self.direction!r})"
        )

    def __len__(self) -> int:
        return len(self.configs)

    @property
    def n_trials(self) -> int:
        """Number of trials kept."""
        return len(self.configs)

    @property
    def n_excluded(self) -> int:
        """Number of trials the adapter left out, over all reasons."""
        return sum(self.excluded.values())

    def encoded(self) -> NDArray[np.float64]:
        """The configurations as ``space.encode(configs)`` gives them (computed when the
        history is made).

        Returns
        -------
        ndarray of shape (n_trials, n_params), read-only
            NaN where a parameter is inactive.

        Examples
        --------
        >>> import hpinsight as hp
        >>> space = hp.SearchSpace([hp.Float("lr", 1e-3, 1.0, log=True)])
        >>> hp.TrialHistory(space, [{"lr": 1.0}], [0.5]).encoded().tolist()
        [[0.0]]
        """
        assert self._encoded is not None  # set by __post_init__
        return self._encoded

    @property
    def is_front(self) -> bool:
        """Whether ``y`` is reaching the Pareto front of a multi-objective study (each
        trial's share of trials dominating it, :mod:`hpinsight._pareto`), not one
        objective."""
        from ._pareto import FRONT_VALUE_NAME

        return self.objective_name == FRONT_VALUE_NAME

    def best(self) -> tuple[int, Mapping[str, Any], float]:
        """Return the best trial as ``(trial_id, config, value)``.

        Raises
        ------
        ValueError
            If the history is empty.
        """
        if not self.configs:
            raise InvalidArgumentError("The history is empty; it has no best trial.")
        i = int(np.argmin(self.y) if self.direction == "minimize" else np.argmax(self.y))
        return self.trial_ids[i], self.configs[i], float(self.y[i])

    def best_indices(self, n: int) -> NDArray[np.intp]:
        """Positions of the ``n`` best trials, best first (ties in trial order).

        Examples
        --------
        >>> import hpinsight as hp
        >>> h = hp.TrialHistory(hp.SearchSpace([hp.Float("x", 0, 1)]),
        ...                     [{"x": 0.1}, {"x": 0.2}, {"x": 0.3}], [3.0, 1.0, 2.0])
        >>> h.best_indices(2).tolist()
        [1, 2]
        """
        y = self.y if self.direction == "minimize" else -self.y
        return np.argsort(y, kind="stable")[: max(int(n), 0)]

    def excluded_summary(self) -> str:
        """Say how many trials were left out and why, in one phrase ("" if none)."""
        if not self.n_excluded:
            return ""
        parts = ", ".join(f"{n} {reason}" for reason, n in sorted(self.excluded.items()))
        return f"{self.n_excluded} trial(s) excluded ({parts})"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe summary: counts, direction, best value (no configurations)."""
        out: dict[str, Any] = {
            "n_trials": self.n_trials,
            "n_excluded": self.n_excluded,
            "excluded": dict(self.excluded),
            "direction": self.direction,
            "objective_name": self.objective_name,
            "params": list(self.space.names),
        }
        if self.configs:
            trial_id, _, value = self.best()
            out["best"] = {"trial_id": trial_id, "value": value}
        return out

    @classmethod
    def from_smac(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Moved to :func:`hpinsight.adapters.from_smac` (the types know no optimizer)."""
        raise AttributeError("TrialHistory.from_smac moved: use hp.adapters.from_smac(facade_or_path)")

    @classmethod
    def from_optuna(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Moved to :func:`hpinsight.adapters.from_optuna` (the types know no optimizer)."""
        raise AttributeError("TrialHistory.from_optuna moved: use hp.adapters.from_optuna(study)")


def _unpickle(cls: type[TrialHistory], space: SearchSpace, configs: list[dict[str, Any]],
              y: NDArray[np.float64], direction: str, trial_ids: tuple[int, ...],
              excluded: dict[str, int], objective_name: str, sampling: SamplingRecord | None,
              label: str | None, loader: str | None,
              encoded: NDArray[np.float64]) -> TrialHistory:
    """A pickled :class:`TrialHistory` back, as :meth:`TrialHistory.__reduce__` wrote it."""
    history = object.__new__(cls)
    for name, value in (("space", space),
                        ("configs", tuple(MappingProxyType(c) for c in configs)),
                        ("y", readonly(y)), ("direction", direction), ("trial_ids", trial_ids),
                        ("excluded", MappingProxyType(excluded)),
                        ("objective_name", objective_name), ("sampling", sampling),
                        ("label", label), ("loader", loader), ("_encoded", readonly(encoded))):
        object.__setattr__(history, name, value)
    return history


def _config_rows(configs: Any, func: str, space: SearchSpace) -> list[dict[str, Any]]:
    """One dict per trial from a sequence of mappings or a pandas DataFrame (where an
    empty cell, NaN, ``None`` or ``pd.NA``, marks an inactive parameter; but that of a
    categorical with the choice ``None`` is that choice wherever the parameter is active:
    pandas 3 stores ``None`` in a column of strings as NaN)."""
    if hasattr(configs, "columns") and hasattr(configs, "to_dict"):  # pandas DataFrame
        none_choice = [p.name for p in (space[n] for n in space.names_parents_first)
                       if isinstance(p, Categorical) and p.contains(None)]
        rows = []
        for row in configs.to_dict("records"):
            kept = {k: v for k, v in row.items() if not empty_cell(v)}
            for name in none_choice:
                if name in row and name not in kept and space.is_active(name, kept):
                    kept[name] = None
            rows.append(kept)
        return rows
    if isinstance(configs, Mapping):
        raise InvalidDataError(
            f"The 'configs' parameter of {func} must be a sequence of configurations, one "
            "mapping per trial. Got a single mapping instead; wrap it in a list."
        )
    rows = []
    for i, c in enumerate(configs):
        if not isinstance(c, Mapping):
            raise InvalidDataError(
                f"Configuration {i} passed to {func} must be a mapping of parameter name to "
                f"value. Got {type(c).__name__} instead."
            )
        rows.append(dict(c))
    return rows


def _trial_ids(ids: Any, func: str) -> tuple[int, ...]:
    """The trials' numbers as ints; an error naming the first that is not one."""
    bad = next((i for i in ids if not is_integral(i)), None) if not isinstance(ids, str) else ids
    if bad is not None:
        raise InvalidArgumentTypeError(
            f"The 'trial_ids' parameter of {func} must hold the trials' numbers, integers "
            f"(e.g. [t.number for t in study.trials]). Got {bad!r} ({type(bad).__name__}); "
            "leave it out to number the trials 0, 1, 2, ...")
    return tuple(int(i) for i in ids)


def _excluded(excluded: Any, func: str) -> dict[str, int]:
    """The counts of trials left out, by reason, without zero counts; an error naming what
    is not a mapping of a reason to a count."""
    example = "e.g. {'failed': 3, 'pruned': 2}"
    try:  # a mapping, anything with .items() (a pandas Series of counts), or pairs
        pairs = dict(excluded.items() if callable(getattr(excluded, "items", None)) else excluded)
    except (TypeError, ValueError):
        raise InvalidArgumentTypeError(
            f"The 'excluded' parameter of {func} must be a mapping of a reason to the number "
            f"of trials left out for it, {example}. Got {type(excluded).__name__} instead."
        ) from None
    for reason, count in pairs.items():
        if not is_integral(count) or count < 0:
            raise InvalidDataError(
                f"The 'excluded' parameter of {func} must count trials: {reason!r} maps to "
                f"{count!r}, not a number of trials ({example}).")
    return {str(k): int(v) for k, v in pairs.items() if int(v)}


def _check_same_index(configs: Any, y: Any, func: str) -> None:
    """Refuse a pandas ``y`` whose index is not the configurations' DataFrame's: values are
    paired by position, so a ``y`` sorted or filtered apart from the frame paired each
    configuration with another trial's value without a word."""
    index: Any = getattr(configs, "index", None)
    own: Any = getattr(y, "index", None)
    if not (hasattr(configs, "columns") and hasattr(index, "equals") and hasattr(own, "equals")):
        return  # not a DataFrame and a Series (a list's .index is its method)
    if len(index) == len(own) and not index.equals(own):
        raise InvalidDataError(
            f"The 'y' parameter of {func} has another index than the configurations' "
            f"DataFrame (first entries {list(own[:3])!r} against {list(index[:3])!r}), and "
            "values are paired by position. Pass y.loc[configs.index] to pair them by "
            "index, or y.to_numpy() if the order already matches.")


def _check_every_parameter_given(space: SearchSpace, configs: Sequence[Mapping[str, Any]],
                                 func: str) -> None:
    """Refuse a parameter without conditions that no configuration names: a column left
    out of a DataFrame would otherwise read as a parameter inactive in every trial, and
    its effect would go to the others (measured: the parameter that drove the objective
    got 0 % and the two that barely mattered shared its share)."""
    if not configs:
        return
    always = [n for n in space.names if n not in space.conditional_names]
    # the first row names nearly every parameter; only the others are looked for further
    never = [n for n in always if n not in configs[0] and not any(n in c for c in configs)]
    if never:
        raise InvalidDataError(
            f"The configurations of {func} give no value for {never!r} in any trial, though "
            "the search space has no condition that makes them inactive. Add their "
            f"column{'s' if len(never) > 1 else ''} (or keys), leave them out of the space, or "
            "declare the conditions under which they are inactive.",
            name=never[0],
        )

