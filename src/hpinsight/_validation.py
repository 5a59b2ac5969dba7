"""Argument checks shared by the public functions (validated once, at the boundary).

Wrong types raise :class:`~hpinsight.exceptions.InvalidArgumentTypeError` (a
``TypeError``), wrong values :class:`~hpinsight.exceptions.InvalidArgumentError`
(a ``ValueError``); both are :class:`~hpinsight.exceptions.HPInsightError`.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import numpy as np

from .exceptions import InvalidArgumentError, InvalidArgumentTypeError, InvalidDataError

if TYPE_CHECKING:
    from numpy.typing import NDArray

_S = TypeVar("_S", bound=str)


@overload
def check_int(value: Any, name: str, func: str, *, minimum: int | None = None,
              allow_none: Literal[False] = False) -> int: ...
@overload
def check_int(value: Any, name: str, func: str, *, minimum: int | None = None,
              allow_none: bool) -> int | None: ...
def check_int(value: Any, name: str, func: str, *, minimum: int | None = None, allow_none: bool = False) -> int | None:
    """Return ``value`` as an int, or raise an error naming the parameter.

    Raises
    ------
    InvalidArgumentTypeError
        If ``value`` is not an int (``bool`` is refused).
    InvalidArgumentError
        If ``value`` is below ``minimum``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentTypeError(
            f"The {name!r} parameter of {func} must be an int. Got {value!r} instead.",
            argument=name, function=func,
        )
    if minimum is not None and value < minimum:
        raise InvalidArgumentError(
            f"The {name!r} parameter of {func} must be >= {minimum}. Got {value!r} instead.",
            argument=name, function=func,
        )
    return int(value)


def check_objective(objective: Any, func: str) -> int | str | None:
    """An objective is chosen by index (``>= 0``), by name (``"values_1"``, a metric name, or
    ``"front"`` for reaching the Pareto front), or left to the study (``None``); whether
    the study has it is checked against the study."""
    if isinstance(objective, str):
        if not objective:
            raise InvalidArgumentError(
                f"The 'objective' parameter of {func} must not be an empty string; pass an "
                "index, an objective's name or 'front'.", argument="objective", function=func)
        return objective
    if objective is not None and (isinstance(objective, bool)
                                  or not isinstance(objective, numbers.Integral)):
        raise InvalidArgumentTypeError(
            f"The 'objective' parameter of {func} must be an int index, an objective's name or "
            f"'front'. Got {objective!r} instead.", argument="objective", function=func)
    return check_int(objective, "objective", func, minimum=0, allow_none=True)


def check_seed(seed: Any, func: str) -> int | None:
    """Seeds are ``int | None``; a Generator would make results unreproducible to compare."""
    return check_int(seed, "seed", func, minimum=0, allow_none=True)


def check_mapping(value: Any, name: str, func: str, *, of: str, example: str) -> Mapping[Any, Any]:
    """Return ``value`` if it is a mapping, else raise
    :class:`~hpinsight.exceptions.InvalidArgumentTypeError` naming the parameter, what it
    maps (``of``) and an ``example``."""
    if not isinstance(value, Mapping):
        raise InvalidArgumentTypeError(
            f"The {name!r} parameter of {func} must be a mapping of {of}, e.g. {example}. "
            f"Got {type(value).__name__} instead.", argument=name, function=func)
    return value


def check_choice(value: Any, name: str, func: str, choices: Sequence[_S]) -> _S:
    """Return the choice equal to ``value``, else raise :class:`InvalidArgumentError`.

    The return type is that of ``choices``: a ``Literal`` when the caller's variable
    is one (``method: Literal["a", "b"] = check_choice(method, ..., ("a", "b"))``).
    """
    for choice in choices:
        if value == choice:
            return choice  # the plain str, also for a numpy string
    raise InvalidArgumentError(
        f"The {name!r} parameter of {func} must be one of {list(choices)!r}. "
        f"Got {value!r} instead.",
        argument=name, function=func,
    )


def check_real(value: Any, name: str, func: str, *, low: float, high: float, low_open: bool = False) -> float:
    """Return ``value`` as a float in ``[low, high]`` (``(low, high]`` if ``low_open``).

    Raises
    ------
    InvalidArgumentTypeError
        If ``value`` is not a finite real number (``bool`` is refused).
    InvalidArgumentError
        If ``value`` is outside the interval.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidArgumentTypeError(
            f"The {name!r} parameter of {func} must be a finite number. Got {value!r} instead.",
            argument=name, function=func,
        )
    v = float(value)
    if (v <= low if low_open else v < low) or v > high:
        bracket = "(" if low_open else "["
        raise InvalidArgumentError(
            f"The {name!r} parameter of {func} must be in {bracket}{low}, {high}]. "
            f"Got {value!r} instead.",
            argument=name, function=func,
        )
    return float(value)


def as_objective(y: Any, n_configs: int, func: str) -> NDArray[np.float64]:
    """Objective values as a 1-D float array matching the configurations."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidDataError(
            f"The 'y' parameter of {func} must be a sequence of numbers (objective values). "
            "Some entries cannot be read as numbers."
        ) from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InvalidDataError(
            f"The 'y' parameter of {func} must be one-dimensional (one value per configuration). "
            f"Got shape {arr.shape}; for several objectives analyse one column at a time."
        )
    if arr.size != n_configs:
        raise InvalidDataError(
            f"{func} got {n_configs} configurations but {arr.size} objective values; "
            "they must match one to one."
        )
    return arr


_F = TypeVar("_F", bound=Callable[..., Any])

#: The keywords that chose or tuned the model before it became an object, and the way now.
MODEL_KEYWORDS = {
    "n_trees": "surrogate=hp.Forest(n_trees=...)",
    "forest": "surrogate=hp.Forest.from_estimator(model)",
    "n_draws": "surrogate=hp.GP(n_draws=...)",
    "significance": "surrogate=hp.GP(shadows=...)",
    "min_samples_leaf": "surrogate=hp.Forest(min_samples_leaf=...)",
    "max_features": "surrogate=hp.Forest(max_features=...)",
    "max_samples": "surrogate=hp.Forest(max_samples=...)",
    "n_jobs": "surrogate=hp.Forest(n_jobs=...)",
}


def moved_keywords(moved: Mapping[str, str]) -> Callable[[_F], _F]:
    """Refuse keywords a function took before, with a message naming what replaced each.

    Without this a caller of the old name gets Python's bare "unexpected keyword
    argument"; with it, ``fanova(h, n_trees=32)`` says to pass
    ``surrogate=hp.Forest(n_trees=32)``.
    """
    def decorate(func: _F) -> _F:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            old = [name for name in kwargs if name in moved]
            if old:
                name = func.__qualname__.removesuffix(".__init__")
                raise InvalidArgumentTypeError(
                    f"{name} no longer takes {old[0]!r}; pass {moved[old[0]]}.")
            return func(*args, **kwargs)
        return checked  # type: ignore[return-value]
    return decorate
