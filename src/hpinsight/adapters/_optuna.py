"""Conversion of Optuna distributions (4.x and 5.x) to a :class:`~hpinsight.SearchSpace`.

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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._optional import import_optional
from .._space import Categorical, Float, Int
from ..exceptions import InvalidSpaceError

if TYPE_CHECKING:
    from types import ModuleType

    from .._space import Parameter, SearchSpace

__all__ = ["space_from_optuna"]


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
        low, high = float(dist.low), float(dist.high)
        step = None if dist.step is None else float(dist.step)
        if step is not None and step > 0:
            # Last grid value not above ``high`` (Optuna normally moved ``high`` there already).
            high = low + step * math.floor((high - low) / step + 1e-9)
        if not high > low:
            return Categorical(name, (low,))
        return Float(name, low, float(dist.high), log=bool(dist.log), step=step)
    if isinstance(dist, D.IntDistribution):
        ilow, ihigh, istep = int(dist.low), int(dist.high), int(dist.step)
        ihigh = ilow + (ihigh - ilow) // istep * istep if istep > 0 else ihigh
        if not ihigh > ilow:
            return Categorical(name, (ilow,))
        return Int(name, ilow, ihigh, log=bool(dist.log), step=istep)
    if isinstance(dist, D.CategoricalDistribution):
        return Categorical(name, tuple(dist.choices))
    raise InvalidSpaceError(
        f"Parameter {name!r} has a {type(dist).__name__}, which hpinsight cannot convert. "
        "Use FloatDistribution, IntDistribution or CategoricalDistribution (what "
        "trial.suggest_float/suggest_int/suggest_categorical create).",
        name=name,
    )
