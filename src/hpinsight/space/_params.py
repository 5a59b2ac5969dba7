"""Hyperparameter and condition types: :class:`Float`, :class:`Int`, :class:`Categorical`,
:class:`Condition` and :class:`AnyOf`, each validated on construction.

They know nothing of a search space or an optimizer, so every layer (adapters
included) can build them; :class:`~hpinsight.SearchSpace` in ``_space`` combines them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..exceptions import InvalidSpaceError, UnknownNameError

if TYPE_CHECKING:
    pass

__all__ = ["AnyOf", "Categorical", "Condition", "ConditionLike", "Float", "Int", "Parameter"]


def is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidSpaceError(
            f"A parameter name must be a non-empty string. Got {name!r} instead."
        )
    return name


def _check_bounds(kind: str, name: str, low: object, high: object, log: bool) -> None:
    for label, value in (("low", low), ("high", high)):
        if not is_real(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
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
            if not is_real(self.step) or not float(self.step) > 0:
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

    @property
    def n_values(self) -> float:
        """Number of valid values: those of the step grid ``low, low + step, ...`` up to
        ``high`` (``high`` off the grid by floating-point error counts as on it), or
        ``math.inf`` without a step."""
        if self.step is None:
            return math.inf
        # as _shared.step_index(low, step, high, "floor") + 1 counts it, with its tolerance
        # of 1e-9 steps (the parameter types import nothing of the package but its errors)
        return float(math.floor((self.high - self.low) / self.step + 1e-9) + 1)

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
            if not is_integral(value):
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


def is_integral(value: object) -> bool:
    """An integer (not a bool), or a finite real with no fraction (``3.0``, as a float
    column of a table holds an integer)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer()


def _numeric_contains(param: Float | Int, value: object, *, integral: bool) -> bool:
    if not is_real(value):
        return False
    v = float(value)  # type: ignore[arg-type]
    if not math.isfinite(v) or v < param.low or v > param.high:
        return False
    if integral:
        return is_integral(value) and (int(v) - int(param.low)) % int(param.step or 1) == 0
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
