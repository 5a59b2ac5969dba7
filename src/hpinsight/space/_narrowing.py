"""Narrowing a search space to a region: bounds on numerical parameters and subsets of
choices, with the conditions of the original space evaluated on the narrowed parents."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._shared import step_index
from ..exceptions import InvalidSpaceError
from ._encoding import MAX_DISCRETE_VALUES
from ._params import AnyOf, Categorical, Condition, Float, Int
from ._space import SearchSpace

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._params import ConditionLike, Parameter

__all__ = ["active_everywhere", "narrow_space", "narrowed"]


def narrowed(p: Parameter, b: Any) -> Parameter:
    """Parameter ``p`` restricted to a region's bounds ``b`` (choices, or native low/high).

    A lower bound above ``p.low`` is a split threshold and the region lies strictly
    above it; the upper bound is inclusive (the left child of a split is ``<=``).
    """
    if isinstance(p, Categorical):
        out: Parameter = Categorical(p.name, list(b))
    else:
        step = p.step or (1 if isinstance(p, Int) else None)
        low, high = max(float(b[0]), p.low), min(float(b[1]), p.high)
        empty = low > high
        if step is not None:  # inwards onto the parameter's grid
            k_low = (0 if low <= p.low
                     else step_index(p.low, step, low, "floor") + 1)  # strictly above
            k_high = step_index(p.low, step, high, "floor")
            # grid values as decode makes them: low + k * step, never above high
            low, high = min(p.low + k_low * step, p.high), min(p.low + k_high * step, p.high)
            empty = k_low > k_high
        if empty:
            raise InvalidSpaceError(
                f"The region's bounds {tuple(b)!r} hold no value of parameter {p.name!r}.",
                name=p.name,
            )
        if not low < high:
            out = Categorical(p.name, [round(low) if isinstance(p, Int) else low])
        elif isinstance(p, Int):
            out = Int(p.name, round(low), round(high), log=p.log, step=p.step)
        else:
            out = Float(p.name, low, high, log=p.log, step=p.step)
    if p.default is not None and out.contains(p.default):  # keep it, never invent one
        out = dataclasses.replace(out, default=p.default)  # type: ignore[arg-type]
    return out




def narrow_space(
    space: SearchSpace, bounds: Mapping[str, Any]
) -> tuple[dict[str, Parameter], dict[str, list[ConditionLike]]]:
    """The parameters and conditions of ``space`` restricted to the region ``bounds``.

    Returns ``(params, conditions)``: the narrowed parameters by name in column
    order, without those never active in the region, and the conditions left per
    child (a parameter absent from ``conditions`` is active everywhere in the region).
    """
    params = {p.name: narrowed(p, bounds[p.name]) if p.name in bounds else p
              for p in space.params}
    kept: dict[str, list[ConditionLike]] = {}
    for name in space.names_parents_first:  # parents are settled before their children
        left: list[ConditionLike] = []
        for cond in space.conditions_of(name):
            outcome = _restricted_like(cond, params, kept)
            if outcome is False:  # never active: the child goes, and its children after it
                del params[name]
                break
            if outcome is not True:
                left.append(outcome)
        else:
            if left:
                kept[name] = left
    return params, kept


def active_everywhere(space: SearchSpace, bounds: Mapping[str, Any]) -> set[str]:
    """Names of the parameters active for every configuration of the region ``bounds``."""
    params, conditions = narrow_space(space, bounds)
    return {name for name in params if name not in conditions}


def _restricted_like(
    cond: ConditionLike, params: Mapping[str, Parameter], kept: Mapping[str, Any]
) -> ConditionLike | bool:
    """``cond`` on the narrowed parents: ``True`` (always active), ``False`` (never) or
    an equivalent condition that is valid for the narrowed parents."""
    parts = cond.conditions if isinstance(cond, AnyOf) else (cond,)
    usable: list[Condition] = []
    for part in parts:
        parent = params.get(part.parent)
        if parent is None:  # the parent is never active in the region, so neither is this
            continue
        restricted, always = _restricted(part, parent)
        if restricted is None:
            continue
        if always and part.parent not in kept:  # the parent is active everywhere, too
            return True
        usable.append(restricted)
    if not usable:
        return False
    return usable[0] if len(usable) == 1 else AnyOf(tuple(usable))


def _restricted(cond: Condition, parent: Parameter) -> tuple[Condition | None, bool]:
    """``cond`` on its narrowed ``parent``: ``(None, False)`` if no value of the parent
    satisfies it, else ``(equivalent, always)`` with a condition valid for ``parent``
    and whether every value of the parent satisfies it."""
    if isinstance(parent, Categorical):
        if cond.values is not None:
            hit = {parent.index_of(v) for v in cond.values if parent.contains(v)}
            ok = [c for i, c in enumerate(parent.choices) if i in hit]
        else:  # a numerical parent narrowed to one value: compare that value
            ok = [c for c in parent.choices if _within(cond, float(c))]  # type: ignore[arg-type]
        if not ok:
            return None, False
        return Condition(cond.child, cond.parent, values=ok), len(ok) == len(parent.choices)
    grid = _grid_values(parent)
    if cond.values is not None:
        ok = [v for v in cond.values if parent.contains(v)]
        if not ok:
            return None, False
        always = grid is not None and np.isin(grid, np.asarray(ok, dtype=float)).all()
        return Condition(cond.child, cond.parent, values=ok), bool(always)
    if grid is not None:
        mask = _within(cond, grid)
        return (cond, bool(mask.all())) if mask.any() else (None, False)
    gt = -math.inf if cond.gt is None else float(cond.gt)
    lt = math.inf if cond.lt is None else float(cond.lt)
    if parent.high <= gt or parent.low >= lt or gt >= lt:
        return None, False
    return cond, parent.low > gt and parent.high < lt


def _within(cond: Condition, x: Any) -> Any:
    """Whether ``x`` (native number or array) satisfies the ``gt``/``lt`` of ``cond``."""
    gt = -math.inf if cond.gt is None else float(cond.gt)
    lt = math.inf if cond.lt is None else float(cond.lt)
    return (x > gt) & (x < lt)


def _grid_values(param: Float | Int) -> NDArray[np.float64] | None:
    """Every native value of an integer or stepped parameter (None: continuous, or too
    many values to list, as the measure treats them)."""
    n = param.n_values
    if n > MAX_DISCRETE_VALUES:  # (or continuous: inf)
        return None
    step = param.step or 1
    return np.asarray(param.low + step * np.arange(int(n), dtype=np.float64))
