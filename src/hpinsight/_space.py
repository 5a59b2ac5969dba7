"""Search spaces: typed hyperparameters, activity conditions and validation.

A :class:`SearchSpace` is an ordered collection of :class:`Float`, :class:`Int`
and :class:`Categorical` hyperparameters plus optional :class:`Condition` objects
that make a parameter active only when a parent takes given values.

The space also fixes the *measure* every analysis integrates over (see
``_encoding``): uniform in the encoded coordinate of each parameter (the log of
the value for ``log=True``), uniform over the values of an integer or stepped
parameter (log-uniform mass for logarithmic integers, as Optuna and SMAC sample
them), and uniform over the choices of a categorical one. Parameters are
independent under that measure, which is what makes the functional ANOVA
decomposition well defined.

Nothing here imports an optimizer; converters to and from Optuna and
ConfigSpace live in ``adapters``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .exceptions import InvalidSpaceError, UnknownNameError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["AnyOf", "Categorical", "Condition", "Float", "Int", "Parameter", "SearchSpace"]


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidSpaceError(
            f"A parameter name must be a non-empty string. Got {name!r} instead."
        )
    return name


def _check_bounds(kind: str, name: str, low: object, high: object, log: bool) -> None:
    for label, value in (("low", low), ("high", high)):
        if not _is_real(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
            raise InvalidSpaceError(
                f"The {label!r} bound of {kind} parameter {name!r} must be a finite number. "
                f"Got {value!r} instead.",
                name=name,
            )
    if float(low) >= float(high):  # type: ignore[arg-type]
        raise InvalidSpaceError(
            f"{kind} parameter {name!r} needs low < high. Got low={low!r}, high={high!r}; "
            "use a Categorical with one choice or leave the parameter out if it is fixed.",
            name=name,
        )
    if log and float(low) <= 0:  # type: ignore[arg-type]
        raise InvalidSpaceError(
            f"{kind} parameter {name!r} has log=True, which needs low > 0. Got low={low!r}; "
            "shift the range or set log=False.",
            name=name,
        )


@dataclass(frozen=True, slots=True)
class Float:
    """A real-valued hyperparameter on ``[low, high]``.

    Parameters
    ----------
    name : str
        Unique name of the parameter.
    low, high : float
        Inclusive bounds, ``low < high``.
    log : bool, default=False
        Search and analyse on a logarithmic scale: the measure is uniform in
        ``log(value)`` and marginal curves are evaluated in log space.
        Requires ``low > 0``.
    step : float, optional
        When given, only ``low + k * step`` (``k = 0, 1, ...``, not above
        ``high``) are valid; the measure is uniform over those values.
        Cannot be combined with ``log=True``.
    default : float, optional
        The value the user would leave the parameter at when not tuning it.

    Examples
    --------
    >>> from hpinsight import Float
    >>> Float("learning_rate", 1e-4, 1e-1, log=True)
    Float(name='learning_rate', low=0.0001, high=0.1, log=True, step=None, default=None)
    """

    name: str
    low: float
    high: float
    _: KW_ONLY
    log: bool = False
    step: float | None = None
    default: float | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_bounds("Float", self.name, self.low, self.high, self.log)
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))
        if self.step is not None:
            if not _is_real(self.step) or not float(self.step) > 0:
                raise InvalidSpaceError(
                    f"The 'step' of Float parameter {self.name!r} must be a positive number. "
                    f"Got {self.step!r} instead.",
                    name=self.name,
                )
            if self.log:
                raise InvalidSpaceError(
                    f"Float parameter {self.name!r} cannot have both log=True and a step; "
                    "drop one of them.",
                    name=self.name,
                )
            object.__setattr__(self, "step", float(self.step))
        if self.default is not None:
            _validate_default(self, self.default)
            object.__setattr__(self, "default", float(self.default))

    @property
    def is_discrete(self) -> bool:
        """Whether the parameter takes finitely many values (a stepped float)."""
        return self.step is not None

    def contains(self, value: object) -> bool:
        """Return whether ``value`` is a valid setting of this parameter."""
        return _numeric_contains(self, value, integral=False)


@dataclass(frozen=True, slots=True)
class Int:
    """An integer hyperparameter on ``{low, low + step, ..., high}``.

    Parameters
    ----------
    name : str
        Unique name of the parameter.
    low, high : int
        Inclusive bounds, ``low < high``.
    log : bool, default=False
        Logarithmic scale: each integer ``k`` carries the mass that a
        log-uniform distribution on ``[low - 0.5, high + 0.5]`` gives to
        ``[k - 0.5, k + 0.5]`` (how Optuna and SMAC sample such integers).
        Requires ``low >= 1`` and ``step == 1``.
    step : int, default=1
        Spacing of the valid values.
    default : int, optional
        The value the user would leave the parameter at when not tuning it.

    Examples
    --------
    >>> from hpinsight import Int
    >>> Int("max_depth", 1, 32, log=True, default=8).default
    8
    """

    name: str
    low: int
    high: int
    _: KW_ONLY
    log: bool = False
    step: int = 1
    default: int | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        for label, value in (("low", self.low), ("high", self.high), ("step", self.step)):
            if not _is_integral(value):
                raise InvalidSpaceError(
                    f"The {label!r} of Int parameter {self.name!r} must be an integer. "
                    f"Got {value!r} instead.",
                    name=self.name,
                )
        object.__setattr__(self, "low", int(self.low))
        object.__setattr__(self, "high", int(self.high))
        object.__setattr__(self, "step", int(self.step))
        _check_bounds("Int", self.name, self.low, self.high, self.log)
        if self.step < 1:
            raise InvalidSpaceError(
                f"The 'step' of Int parameter {self.name!r} must be >= 1. Got {self.step}.",
                name=self.name,
            )
        if self.log and self.step != 1:
            raise InvalidSpaceError(
                f"Int parameter {self.name!r} cannot have log=True with step={self.step}; "
                "use step=1 or log=False.",
                name=self.name,
            )
        if (self.high - self.low) % self.step:
            raise InvalidSpaceError(
                f"Int parameter {self.name!r}: high - low = {self.high - self.low} is not a "
                f"multiple of step={self.step}; adjust 'high' to the last reachable value.",
                name=self.name,
            )
        if self.default is not None:
            _validate_default(self, self.default)
            object.__setattr__(self, "default", int(self.default))

    @property
    def is_discrete(self) -> bool:
        """Always ``True``: integers are analysed over their finite set of values."""
        return True

    @property
    def n_values(self) -> int:
        """Number of valid values."""
        return (self.high - self.low) // self.step + 1

    def contains(self, value: object) -> bool:
        """Return whether ``value`` is a valid setting of this parameter."""
        return _numeric_contains(self, value, integral=True)


@dataclass(frozen=True, slots=True)
class Categorical:
    """A hyperparameter with an unordered finite set of choices.

    Parameters
    ----------
    name : str
        Unique name of the parameter.
    choices : sequence of hashable
        The distinct settings (strings, numbers, booleans or ``None``). Their
        order only fixes the encoding (the choice's index); the measure is
        uniform over choices.
    default : hashable, optional
        The choice the user would leave the parameter at when not tuning it.

    Examples
    --------
    >>> from hpinsight import Categorical
    >>> Categorical("kernel", ["rbf", "linear", "poly"]).choices
    ('rbf', 'linear', 'poly')
    """

    name: str
    choices: Sequence[Hashable]
    _: KW_ONLY
    default: Hashable = None
    _index: dict[Any, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        if isinstance(self.choices, str | bytes) or not isinstance(self.choices, Iterable):
            raise InvalidSpaceError(
                f"The 'choices' of Categorical parameter {self.name!r} must be a sequence of "
                f"values. Got {self.choices!r} instead.",
                name=self.name,
            )
        choices = tuple(self.choices)
        if not choices:
            raise InvalidSpaceError(
                f"Categorical parameter {self.name!r} needs at least one choice.",
                name=self.name,
            )
        index: dict[Any, int] = {}
        for i, choice in enumerate(choices):
            try:
                key = _choice_key(choice)
            except TypeError:
                raise InvalidSpaceError(
                    f"Choice {choice!r} of Categorical parameter {self.name!r} is not hashable; "
                    "use strings, numbers, booleans or None.",
                    name=self.name,
                ) from None
            if key in index:
                raise InvalidSpaceError(
                    f"Categorical parameter {self.name!r} lists the choice {choice!r} twice.",
                    name=self.name,
                )
            index[key] = i
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "_index", index)
        if self.default is not None and not self.contains(self.default):
            raise InvalidSpaceError(
                f"The default {self.default!r} of Categorical parameter {self.name!r} is not "
                f"one of its choices {list(choices)!r}.",
                name=self.name,
            )

    @property
    def is_discrete(self) -> bool:
        """Always ``True``."""
        return True

    def index_of(self, value: object) -> int:
        """Return the position of ``value`` in :attr:`choices`.

        Raises
        ------
        KeyError
            If ``value`` is not a choice (``True`` and ``1`` are different choices).
        """
        try:
            return self._index[_choice_key(value)]
        except TypeError:
            raise UnknownNameError(value) from None

    def contains(self, value: object) -> bool:
        """Return whether ``value`` is one of the choices."""
        try:
            self.index_of(value)
        except KeyError:
            return False
        return True


Parameter: TypeAlias = Float | Int | Categorical


def _choice_key(value: object) -> tuple[bool, object]:
    # ``True == 1`` in Python; keep booleans apart from numbers so they are distinct choices.
    if isinstance(value, bool | np.bool_):
        return (True, bool(value))
    if isinstance(value, np.generic):
        value = value.item()
    hash(value)
    return (False, value)


def _is_integral(value: object) -> bool:
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer()


def _numeric_contains(param: Float | Int, value: object, *, integral: bool) -> bool:
    if not _is_real(value):
        return False
    v = float(value)  # type: ignore[arg-type]
    if not math.isfinite(v) or v < param.low or v > param.high:
        return False
    if integral:
        return _is_integral(value) and (int(v) - int(param.low)) % int(param.step or 1) == 0
    if param.step is not None:
        k = (v - param.low) / param.step
        return abs(k - round(k)) <= 1e-9 * max(1.0, abs(k))
    return True


def _validate_default(param: Float | Int, default: object) -> None:
    if not param.contains(default):
        raise InvalidSpaceError(
            f"The default {default!r} of {type(param).__name__} parameter {param.name!r} is "
            f"not a valid value of [{param.low}, {param.high}]"
            + (f" with step {param.step}" if param.step not in (None, 1) else "")
            + ".",
            name=param.name,
        )


@dataclass(frozen=True, slots=True)
class Condition:
    """Make ``child`` active only when ``parent`` is active and its value qualifies.

    Give either ``values`` (the parent must equal one of them; any parameter
    type) or one or both of ``gt``/``lt`` (strict bounds on a numeric parent).
    Several conditions on the same child must all hold; use :class:`AnyOf`
    for alternatives.

    Parameters
    ----------
    child, parent : str
        Parameter names.
    values : sequence, optional
        Parent values that activate the child.
    gt, lt : float, optional
        The child is active when ``parent > gt`` and/or ``parent < lt``.

    Examples
    --------
    >>> from hpinsight import Condition
    >>> Condition("gamma", "kernel", values=["rbf", "poly"]).values
    ('rbf', 'poly')
    """

    child: str
    parent: str
    values: Sequence[Hashable] | None = None
    _: KW_ONLY
    gt: float | None = None
    lt: float | None = None

    def __post_init__(self) -> None:
        _check_name(self.child)
        _check_name(self.parent)
        if self.child == self.parent:
            raise InvalidSpaceError(
                f"A condition cannot make {self.child!r} depend on itself.", name=self.child
            )
        if self.values is not None:
            if isinstance(self.values, str | bytes) or not isinstance(self.values, Iterable):
                object.__setattr__(self, "values", (self.values,))
            else:
                object.__setattr__(self, "values", tuple(self.values))
            if not self.values:
                raise InvalidSpaceError(
                    f"The condition on {self.child!r} lists no parent values.", name=self.child
                )
            if self.gt is not None or self.lt is not None:
                raise InvalidSpaceError(
                    f"The condition on {self.child!r} mixes 'values' with 'gt'/'lt'; use two "
                    "conditions (they are combined with AND) or AnyOf.",
                    name=self.child,
                )
        elif self.gt is None and self.lt is None:
            raise InvalidSpaceError(
                f"The condition on {self.child!r} needs 'values', 'gt' or 'lt'.", name=self.child
            )

    @property
    def parents(self) -> tuple[str, ...]:
        """Names of the parameters this condition reads."""
        return (self.parent,)


@dataclass(frozen=True, slots=True)
class AnyOf:
    """Activate ``child`` when at least one of several conditions holds.

    Parameters
    ----------
    conditions : sequence of Condition
        Conditions that all name the same child.

    Examples
    --------
    >>> from hpinsight import AnyOf, Condition
    >>> either = AnyOf([Condition("c", "a", values=[1]), Condition("c", "b", gt=0.5)])
    >>> either.child, either.parents
    ('c', ('a', 'b'))
    """

    conditions: tuple[Condition, ...]

    def __post_init__(self) -> None:
        conditions = tuple(self.conditions)
        if not conditions or not all(isinstance(c, Condition) for c in conditions):
            raise InvalidSpaceError("AnyOf needs one or more Condition objects.")
        if len({c.child for c in conditions}) != 1:
            raise InvalidSpaceError(
                "All conditions in an AnyOf must name the same child; got "
                f"{sorted({c.child for c in conditions})!r}."
            )
        object.__setattr__(self, "conditions", conditions)

    @property
    def child(self) -> str:
        """The parameter these conditions activate."""
        return self.conditions[0].child

    @property
    def parents(self) -> tuple[str, ...]:
        """Names of the parameters the conditions read, in order of first mention."""
        return tuple(dict.fromkeys(c.parent for c in self.conditions))


ConditionLike: TypeAlias = Condition | AnyOf


class SearchSpace:
    """An ordered set of hyperparameters, with optional activity conditions.

    Parameters
    ----------
    params : sequence of Float, Int or Categorical
        The hyperparameters; their order is the column order of :meth:`encode`.
    conditions : sequence of Condition or AnyOf, optional
        Activity rules. A parameter may have several (all must hold).

    Notes
    -----
    *Encoding.* :meth:`encode` maps configurations to a float matrix with one
    column per parameter: the value for linear parameters, its natural log
    for ``log=True``, and the choice index for categoricals. Inactive or
    missing parameters are ``NaN``.

    *Measure.* Analyses integrate over the product of per-parameter
    measures described in the module docstring; :meth:`sample` draws from
    exactly that measure (with inactive children removed).

    Examples
    --------
    >>> import hpinsight as hp
    >>> space = hp.SearchSpace([
    ...     hp.Float("lr", 1e-4, 1e-1, log=True),
    ...     hp.Int("layers", 1, 4),
    ...     hp.Categorical("optimizer", ["adam", "sgd"]),
    ...     hp.Float("momentum", 0.0, 0.99),
    ... ], conditions=[hp.Condition("momentum", "optimizer", values=["sgd"])])
    >>> space.names
    ('lr', 'layers', 'optimizer', 'momentum')
    >>> space.encode([{"lr": 0.01, "layers": 2, "optimizer": "adam"}]).round(3)
    array([[-4.605,  2.   ,  0.   ,    nan]])
    """

    __slots__ = ("_by_name", "_children", "_conditions", "_order", "_params")

    def __init__(
        self,
        params: Sequence[Parameter],
        conditions: Sequence[ConditionLike] = (),
    ) -> None:
        if isinstance(params, Mapping) or not isinstance(params, Iterable):
            raise InvalidSpaceError(
                "SearchSpace expects a sequence of Float/Int/Categorical parameters. "
                f"Got {type(params).__name__} instead."
            )
        params = tuple(params)
        if not params:
            raise InvalidSpaceError("A search space needs at least one parameter.")
        by_name: dict[str, int] = {}
        for i, p in enumerate(params):
            if not isinstance(p, Float | Int | Categorical):
                raise InvalidSpaceError(
                    "Each parameter must be an hpinsight Float, Int or Categorical. "
                    f"Got {p!r} at position {i}."
                )
            if p.name in by_name:
                raise InvalidSpaceError(
                    f"The parameter name {p.name!r} is used twice; names must be unique.",
                    name=p.name,
                )
            by_name[p.name] = i
        grouped: dict[str, list[ConditionLike]] = {}
        for cond in conditions:
            if not isinstance(cond, Condition | AnyOf):
                raise InvalidSpaceError(
                    f"Conditions must be Condition or AnyOf objects. Got {cond!r}."
                )
            parts = cond.conditions if isinstance(cond, AnyOf) else (cond,)
            for part in parts:
                for role, name in (("child", part.child), ("parent", part.parent)):
                    if name not in by_name:
                        raise InvalidSpaceError(
                            f"A condition names the {role} {name!r}, which is not in the "
                            f"space {list(by_name)!r}.",
                            name=name,
                        )
                _check_condition_fits(part, params[by_name[part.parent]])
            grouped.setdefault(cond.child, []).append(cond)
        self._params = params
        self._by_name = by_name
        self._conditions = {k: tuple(v) for k, v in grouped.items()}
        self._children = tuple(grouped)
        self._order = self._topological_order()

    # -- structure -----------------------------------------------------------------
    @property
    def params(self) -> tuple[Parameter, ...]:
        """The parameters, in column order."""
        return self._params

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names, in column order."""
        return tuple(p.name for p in self._params)

    @property
    def conditions(self) -> tuple[ConditionLike, ...]:
        """All activity conditions."""
        return tuple(c for group in self._conditions.values() for c in group)

    @property
    def conditional_names(self) -> tuple[str, ...]:
        """Names of parameters that have at least one condition, in column order."""
        return tuple(n for n in self.names if n in self._conditions)

    @property
    def defaults(self) -> dict[str, Any]:
        """Defaults of the parameters that declare one."""
        return {p.name: p.default for p in self._params if p.default is not None}

    def conditions_of(self, name: str) -> tuple[ConditionLike, ...]:
        """Return the conditions that activate ``name`` (empty if unconditional)."""
        self.index(name)
        return self._conditions.get(name, ())

    def index(self, name: str) -> int:
        """Return the column of parameter ``name``.

        Raises
        ------
        KeyError
            With the valid names, if ``name`` is not in the space.
        """
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise UnknownNameError(
                f"{name!r} is not a parameter of this search space; valid names are "
                f"{list(self._by_name)!r}."
            ) from None

    def __getitem__(self, name: str) -> Parameter:
        return self._params[self.index(name)]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchSpace):
            return NotImplemented
        return self._params == other._params and self._conditions == other._conditions

    def __hash__(self) -> int:
        return hash((self._params, tuple(sorted(self._conditions.items()))))

    def __repr__(self) -> str:
        kinds = ", ".join(f"{p.name}:{type(p).__name__}" for p in self._params)
        extra = f", {len(self.conditions)} conditions" if self._conditions else ""
        return f"SearchSpace([{kinds}]{extra})"

    def _topological_order(self) -> tuple[int, ...]:
        # Parents before children, so activity can be resolved in one pass.
        state: dict[str, int] = {}
        order: list[int] = []

        def visit(name: str, path: tuple[str, ...]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join((*path[path.index(name) :], name))
                raise InvalidSpaceError(f"The conditions form a cycle: {cycle}.", name=name)
            state[name] = 1
            for cond in self._conditions.get(name, ()):
                for parent in cond.parents:
                    visit(parent, (*path, name))
            state[name] = 2
            order.append(self._by_name[name])

        for p in self._params:
            visit(p.name, ())
        return tuple(order)

    # -- encoding, activity, sampling (implemented in _encoding) ---------------------
    def encode(self, configs: Any) -> NDArray[np.float64]:
        """Encode configurations as a float matrix.

        Parameters
        ----------
        configs : sequence of mapping or pandas.DataFrame
            Configurations in native units, one mapping (or row) each. A
            parameter that is missing (or ``None``/``NaN`` in a DataFrame) is
            inactive.

        Returns
        -------
        ndarray of shape (n_configs, n_params)
            Encoded values (see the class notes); ``NaN`` marks inactive entries.

        Raises
        ------
        InvalidDataError
            On unknown parameter names, values outside the space, or a
            parameter missing although its conditions make it active.
        """
        from ._encoding import encode_configs

        return encode_configs(self, configs)

    def decode(self, X: Any) -> list[dict[str, Any]]:
        """Turn an encoded matrix back into configurations in native units.

        Integer parameters are rounded to their nearest valid value and
        categoricals to the nearest choice index; ``NaN`` entries are left out
        of the returned dictionaries.

        Parameters
        ----------
        X : array-like of shape (n_configs, n_params)

        Returns
        -------
        list of dict
        """
        from ._encoding import decode_matrix

        return decode_matrix(self, X)

    def active_mask(self, X: Any) -> NDArray[np.bool_]:
        """Which entries of an encoded matrix are active under the conditions.

        Parameters
        ----------
        X : array-like of shape (n_configs, n_params)
            Encoded values; only parent columns are read.

        Returns
        -------
        ndarray of bool, shape (n_configs, n_params)
        """
        from ._encoding import active_mask

        return active_mask(self, np.asarray(X, dtype=float))

    @property
    def names_parents_first(self) -> tuple[str, ...]:
        """Parameter names with every condition's parents before its child."""
        return tuple(self.names[j] for j in self._order)

    def is_active(self, name: str, config: Mapping[str, Any]) -> bool:
        """Whether ``name`` is active given the (possibly partial) native ``config``.

        Only the parents' values are read; a parent missing from ``config`` counts as
        inactive, so its children are too.
        """
        from ._encoding import active_mask, encode_value

        j = self.index(name)
        if name not in self._conditions:
            return True
        row = np.full((1, len(self)), np.nan)
        for k, param in enumerate(self._params):
            if param.name in config and param.name != name:
                row[0, k] = encode_value(param, config[param.name])
        return bool(active_mask(self, row)[0, j])

    def sample(self, n: int, *, seed: int | None = None) -> list[dict[str, Any]]:
        """Draw configurations from the space's own measure.

        Parameters
        ----------
        n : int
            Number of configurations.
        seed : int, optional
            Seed of the random generator; the same seed gives the same draws.

        Returns
        -------
        list of dict
            Configurations in native units; inactive parameters are absent.
        """
        from ._encoding import sample_encoded

        return self.decode(sample_encoded(self, n, seed=seed))

    # -- converters ------------------------------------------------------------------
    @classmethod
    def from_configspace(cls, configspace: Any) -> SearchSpace:
        """Build a search space from a ``ConfigSpace.ConfigurationSpace`` (1.x).

        Uniform/normal float and integer hyperparameters become :class:`Float`
        / :class:`Int` (normal ones over their bounds, as ConfigSpace requires
        bounds), categorical and ordinal ones become :class:`Categorical`,
        constants become one-choice categoricals. Equals, NotEquals, In,
        GreaterThan and LessThan conditions and their And/Or conjunctions
        become :class:`Condition`/:class:`AnyOf`. Forbidden clauses are not
        part of the measure and are ignored by the analyses (a warning says so).
        """
        from .adapters._configspace import space_from_configspace

        return space_from_configspace(cls, configspace)

    def to_configspace(self, *, seed: int | None = None) -> Any:
        """Return an equivalent ``ConfigSpace.ConfigurationSpace`` (1.x)."""
        from .adapters._configspace import space_to_configspace

        return space_to_configspace(self, seed=seed)

    @classmethod
    def from_optuna(cls, distributions: Mapping[str, Any]) -> SearchSpace:
        """Build a search space from Optuna distributions.

        Parameters
        ----------
        distributions : mapping of str to optuna.distributions.BaseDistribution
            For example ``study.best_trial.distributions``.
        """
        from .adapters._optuna import space_from_optuna

        return space_from_optuna(cls, distributions)


def _check_condition_fits(cond: Condition, parent: Parameter) -> None:
    if cond.values is not None:
        bad = [v for v in cond.values if not parent.contains(v)]
        if bad:
            raise InvalidSpaceError(
                f"The condition on {cond.child!r} lists {bad!r}, which "
                f"{'is' if len(bad) == 1 else 'are'} not valid for parent {parent.name!r}.",
                name=cond.child,
            )
    elif isinstance(parent, Categorical):
        raise InvalidSpaceError(
            f"The condition on {cond.child!r} compares categorical parent {parent.name!r} with "
            "gt/lt; categorical choices have no order, so list the activating 'values' instead.",
            name=cond.child,
        )
    else:
        for label, bound in (("gt", cond.gt), ("lt", cond.lt)):
            if bound is not None and (not _is_real(bound) or not math.isfinite(float(bound))):
                raise InvalidSpaceError(
                    f"The {label!r} of the condition on {cond.child!r} must be a finite number. "
                    f"Got {bound!r} instead.",
                    name=cond.child,
                )
