"""Conversion between :class:`~hpinsight.SearchSpace` and ConfigSpace 1.x.

Only ConfigSpace's public API is used, and ConfigSpace is imported inside the
functions, so importing this module does not import ConfigSpace.

ConfigSpace -> hpinsight (:func:`space_from_configspace`)
----------------------------------------------------------
Hyperparameters, in ConfigSpace's own order (``cs.keys()``, which is
topological and alphabetical within a level, so it may differ from the order
they were added in):

* ``UniformFloatHyperparameter`` -> :class:`~hpinsight.Float` (``log`` and
  ``default_value`` kept); ``UniformIntegerHyperparameter`` ->
  :class:`~hpinsight.Int`.
* ``NormalFloat``/``BetaFloat`` and ``NormalInteger``/``BetaInteger`` ->
  ``Float``/``Int`` over their ``lower``/``upper`` bounds. The prior is
  dropped: hpinsight's analyses integrate over the uniform (or log-uniform)
  measure on the bounds, not over the normal or beta density.
* ``CategoricalHyperparameter`` -> :class:`~hpinsight.Categorical` with the
  same choices and default. Choice ``weights`` are ignored: the measure is
  uniform over choices.
* ``OrdinalHyperparameter`` -> ``Categorical`` whose choices are the ordinal
  sequence, in order (``GreaterThan``/``LessThan`` conditions on it become the
  list of values before or after the threshold).
* ``Constant`` (and ``UnParametrizedHyperparameter``) -> one-choice
  ``Categorical``. A numeric hyperparameter with ``lower == upper`` also
  becomes a one-choice ``Categorical``.

Conditions:

* ``EqualsCondition`` and ``InCondition`` -> ``Condition(values=...)``;
* ``NotEqualsCondition`` -> ``Condition(values=<all other values>)`` for
  categorical, ordinal and integer parents, and
  ``AnyOf([Condition(lt=v), Condition(gt=v)])`` for float parents (and for
  integer parents with more than 1000 values);
* ``GreaterThanCondition``/``LessThanCondition`` -> ``Condition(gt=v)`` /
  ``Condition(lt=v)``;
* ``AndConjunction`` -> several conditions on the child (all must hold); a
  ``GreaterThan`` and a ``LessThan`` on the same parent are merged into one
  ``Condition(gt=..., lt=...)``;
* ``OrConjunction`` of simple conditions (or of nested ``OrConjunction``) ->
  :class:`~hpinsight.AnyOf`. An ``AndConjunction`` inside an
  ``OrConjunction`` is not supported (``InvalidSpaceError``), except for a
  ``GreaterThan``/``LessThan`` pair on one parent, which is a single
  ``Condition``.

Forbidden clauses are not mapped: the analyses integrate over the product of
the per-parameter measures, so they are ignored with one
:class:`~hpinsight.exceptions.HPInsightWarning`.

hpinsight -> ConfigSpace (:func:`space_to_configspace`)
-------------------------------------------------------
``Float`` -> ``UniformFloatHyperparameter``, ``Int`` ->
``UniformIntegerHyperparameter``, a ``Float`` or ``Int`` with a step ->
``OrdinalHyperparameter`` of its grid values (at most 10000 of them),
``Categorical`` -> ``CategoricalHyperparameter``; defaults are carried over.
``Condition`` -> ``EqualsCondition``/``InCondition``/``GreaterThanCondition``
/``LessThanCondition`` (both ``gt`` and ``lt`` -> an ``AndConjunction``),
several conditions on one child -> ``AndConjunction`` and ``AnyOf`` ->
``OrConjunction``. ConfigSpace only accepts thresholds that are legal parent
values, so ``gt``/``lt`` are moved to an equivalent legal value (e.g.
``gt=2.5`` on an integer becomes ``> 2``); a bound that every parent value
satisfies is dropped.

ConfigSpace always has a default and has no stepped numeric type, so the
hyperparameters carry a small ``meta={"hpinsight": {...}}`` entry that records
"no default" and the ``Float``/``Int`` behind an ordinal grid.
:func:`space_from_configspace` reads it back, which makes
``from_configspace(to_configspace(space))`` equal to ``space``
up to parameter order and to rewriting conditions into equivalent ones (and
up to the last digit of defaults and condition values of a stepped ``Float``,
which come back as the grid value ``low + k * step``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._optional import import_optional
from .._warn import warn
from ..exceptions import HPInsightWarning, InvalidSpaceError
from ..space import AnyOf, Categorical, Condition, Float, Int

if TYPE_CHECKING:
    from types import ModuleType

    from ..space import ConditionLike, Parameter, SearchSpace

__all__ = ["space_from_configspace", "space_to_configspace"]

_META_KEY = "hpinsight"
# NotEquals on an integer parent lists the other values up to this many, else uses lt/gt.
_MAX_LISTED_VALUES = 1000
# Largest grid of a stepped Float/Int that to_configspace writes as an OrdinalHyperparameter.
_MAX_ORDINAL_VALUES = 10_000


# --------------------------------------------------------------------------------------
# shared helpers
def _py(value: Any) -> Any:
    """Turn NumPy scalars into the matching Python objects."""
    return value.item() if isinstance(value, np.generic) else value


def _grid_values(param: Float | Int) -> list[float] | list[int]:
    """Valid values of a stepped ``Float`` or of an ``Int``, computed as hpinsight decodes them."""
    if isinstance(param, Int):
        return list(range(param.low, param.high + 1, param.step))
    assert param.step is not None
    n = math.floor((param.high - param.low) / param.step + 1e-9) + 1
    return [param.low + param.step * float(k) for k in range(n)]


def _is_stepped(param: Parameter) -> bool:
    return (isinstance(param, Int) and param.step != 1) or (
        isinstance(param, Float) and param.step is not None
    )


def _meta_info(hp: Any) -> Mapping[str, Any]:
    meta = getattr(hp, "meta", None)
    if isinstance(meta, Mapping):
        info = meta.get(_META_KEY)
        if isinstance(info, Mapping):
            return info
    return {}


# --------------------------------------------------------------------------------------
# ConfigSpace -> hpinsight
def space_from_configspace(cls: type[SearchSpace], cs: Any) -> SearchSpace:
    """Build a search space from a ``ConfigSpace.ConfigurationSpace`` (1.x).

    Parameters
    ----------
    cls : type
        :class:`~hpinsight.SearchSpace` or a subclass; the return type.
    cs : ConfigSpace.ConfigurationSpace
        The space to convert. See the module docstring for what is mapped.

    Returns
    -------
    SearchSpace
        Parameters in ConfigSpace's order, with the converted conditions.

    Raises
    ------
    InvalidSpaceError
        If ``cs`` is not a ``ConfigurationSpace`` or holds a hyperparameter or
        condition that hpinsight cannot represent.

    Warns
    -----
    HPInsightWarning
        If ``cs`` has forbidden clauses, which the analyses ignore.
    """
    CS = import_optional("ConfigSpace", "SearchSpace.from_configspace")
    if not isinstance(cs, CS.ConfigurationSpace):
        raise InvalidSpaceError(
            "SearchSpace.from_configspace expects a ConfigSpace.ConfigurationSpace. "
            f"Got {type(cs).__name__} instead; build the search space with "
            "SearchSpace([...]) if you do not use ConfigSpace."
        )
    params = [_param_from_hp(CS, hp) for hp in cs.values()]
    by_name = {p.name: p for p in params}
    conditions: list[ConditionLike] = []
    for cond in cs.conditions:
        conditions.extend(_conditions_from_cs(CS, cond, by_name))
    space = cls(params, conditions)
    n_forbidden = len(cs.forbidden_clauses)
    if n_forbidden:
        warn(
            f"The ConfigurationSpace has {n_forbidden} forbidden clause(s), which the "
            "importances do not model: they integrate over the product of the per-parameter "
            "measures, including the forbidden combinations. Results on those regions are "
            "extrapolation.",
            HPInsightWarning,
            stacklevel=None,  # the user's line: reached from from_smac, report, or directly
        )
    return space


def _param_from_hp(CS: ModuleType, hp: Any) -> Parameter:
    H = CS.hyperparameters
    info = _meta_info(hp)
    has_default = info.get("no_default") is not True
    name = hp.name
    if isinstance(hp, H.IntegerHyperparameter):
        ilow, ihigh = int(hp.lower), int(hp.upper)
        idefault = int(hp.default_value) if has_default else None
        if ilow == ihigh:
            return Categorical(name, (ilow,), default=idefault)
        return Int(name, ilow, ihigh, log=bool(hp.log), default=idefault)
    if isinstance(hp, H.FloatHyperparameter):
        low, high = float(hp.lower), float(hp.upper)
        fdefault = float(hp.default_value) if has_default else None
        if low == high:
            return Categorical(name, (low,), default=fdefault)
        return Float(name, low, high, log=bool(hp.log), default=fdefault)
    if isinstance(hp, H.OrdinalHyperparameter):
        sequence = tuple(_py(v) for v in hp.sequence)
        default = _py(hp.default_value) if has_default else None
        stepped = _stepped_from_meta(name, info, sequence, default)
        if stepped is not None:
            return stepped
        return Categorical(name, sequence, default=default)
    if isinstance(hp, H.CategoricalHyperparameter):
        default = _py(hp.default_value) if has_default else None
        return Categorical(name, tuple(_py(c) for c in hp.choices), default=default)
    if isinstance(hp, H.Constant):
        value = _py(hp.value)
        return Categorical(name, (value,), default=value if has_default else None)
    raise InvalidSpaceError(
        f"Hyperparameter {name!r} is a {type(hp).__name__}, which hpinsight cannot convert. "
        "Supported are the uniform, normal and beta float/integer hyperparameters, "
        "categorical, ordinal and constant ones; replace it with one of those.",
        name=name,
    )


def _stepped_from_meta(
    name: str, info: Mapping[str, Any], sequence: tuple[Any, ...], default: Any
) -> Float | Int | None:
    """Rebuild the stepped Float/Int that ``to_configspace`` wrote as an ordinal, if intact."""
    kind = info.get("kind")
    if kind not in ("Float", "Int"):
        return None
    try:
        param: Float | Int
        if kind == "Int":
            param = Int(name, info["low"], info["high"], step=info["step"], default=default)
        else:
            param = Float(name, info["low"], info["high"], step=info["step"], default=default)
    except (KeyError, TypeError, ValueError):
        return None
    grid = _grid_values(param)
    if len(grid) != len(sequence) or not all(
        isinstance(s, int | float)
        and not isinstance(s, bool)
        and math.isclose(g, s, rel_tol=1e-9, abs_tol=1e-12)
        for g, s in zip(grid, sequence, strict=True)
    ):
        return None  # the ordinal was edited after export: treat it as a plain ordinal
    return param


def _conditions_from_cs(
    CS: ModuleType, cond: Any, params: Mapping[str, Parameter]
) -> list[ConditionLike]:
    """Conditions (all must hold) equivalent to one ConfigSpace condition or conjunction."""
    if isinstance(cond, CS.AndConjunction):
        out: list[ConditionLike] = []
        for component in cond.components:
            out.extend(_conditions_from_cs(CS, component, params))
        return _merge_ranges(out)
    if isinstance(cond, CS.OrConjunction):
        parts = _disjuncts(CS, cond, params)
        return [AnyOf(tuple(parts))] if len(parts) > 1 else list(parts)
    return _simple_from_cs(CS, cond, params)


def _disjuncts(CS: ModuleType, cond: Any, params: Mapping[str, Parameter]) -> list[Condition]:
    """Simple conditions (any may hold) equivalent to an ``OrConjunction``."""
    parts: list[Condition] = []
    for component in cond.components:
        if isinstance(component, CS.OrConjunction):
            parts.extend(_disjuncts(CS, component, params))
            continue
        converted = _conditions_from_cs(CS, component, params)
        if isinstance(component, CS.AndConjunction):
            if len(converted) == 1 and isinstance(converted[0], Condition):
                parts.append(converted[0])
                continue
            child = component.child.name
            raise InvalidSpaceError(
                f"The condition on {child!r} is an OrConjunction that contains the "
                f"AndConjunction {component}. hpinsight cannot represent an AND nested inside "
                "an OR (AnyOf combines simple conditions only; the exception is an AND of "
                "conditions on one parent, such as a GreaterThan and a LessThan, which is one "
                "condition). Rewrite the condition as an "
                "OR of simple conditions, e.g. with InCondition, or simplify it.",
                name=child,
            )
        for c in converted:
            parts.extend(c.conditions if isinstance(c, AnyOf) else (c,))
    return parts


def _merge_ranges(conditions: list[ConditionLike]) -> list[ConditionLike]:
    """Merge a ``gt``-only and an ``lt``-only condition on the same parent into one, and
    two conditions listing values of the same parent into one listing the values both
    allow (a GreaterThan and a LessThan on an ordinal parent are listed values)."""
    out: list[ConditionLike] = []
    open_range: dict[str, int] = {}
    listed: dict[str, int] = {}
    for cond in conditions:
        if isinstance(cond, Condition) and cond.values is not None:
            i = listed.get(cond.parent)
            if i is not None:
                prev = out[i]
                assert isinstance(prev, Condition)
                assert prev.values is not None
                both = [v for v in prev.values if v in cond.values]
                out[i] = _listed(cond.child, cond.parent, both, f"{prev} and {cond}")
                continue
            listed[cond.parent] = len(out)
        if (
            isinstance(cond, Condition)
            and cond.values is None
            and (cond.gt is None) != (cond.lt is None)
        ):
            i = open_range.get(cond.parent)
            if i is not None:
                prev = out[i]
                assert isinstance(prev, Condition)
                if (prev.gt is None) != (cond.gt is None):
                    out[i] = Condition(
                        cond.child,
                        cond.parent,
                        gt=prev.gt if prev.gt is not None else cond.gt,
                        lt=prev.lt if prev.lt is not None else cond.lt,
                    )
                    del open_range[cond.parent]
                    continue
            open_range.setdefault(cond.parent, len(out))
        out.append(cond)
    return out


def _parent_value(parent: Parameter, value: Any) -> Any:
    value = _py(value)
    if isinstance(parent, Int):
        return int(value)
    if isinstance(parent, Float):
        return float(value)
    return value


def _simple_from_cs(
    CS: ModuleType, cond: Any, params: Mapping[str, Parameter]
) -> list[ConditionLike]:
    child = cond.child.name
    parent = params[cond.parent.name]
    if isinstance(cond, CS.EqualsCondition):
        return [Condition(child, parent.name, values=(_parent_value(parent, cond.value),))]
    if isinstance(cond, CS.InCondition):
        listed = tuple(_parent_value(parent, v) for v in cond.values)
        return [Condition(child, parent.name, values=listed)]
    if isinstance(cond, CS.NotEqualsCondition):
        return [_not_equals(child, parent, _parent_value(parent, cond.value))]
    if isinstance(cond, CS.GreaterThanCondition | CS.LessThanCondition):
        greater = isinstance(cond, CS.GreaterThanCondition)
        value = _parent_value(parent, cond.value)
        if isinstance(parent, Categorical):  # an ordinal parent: compare positions
            k = parent.index_of(value)
            values = parent.choices[k + 1 :] if greater else parent.choices[:k]
            return [_listed(child, parent.name, values, str(cond))]
        if greater:
            return [Condition(child, parent.name, gt=value)]
        return [Condition(child, parent.name, lt=value)]
    raise InvalidSpaceError(
        f"The condition {cond} on {child!r} is a {type(cond).__name__}, which hpinsight cannot "
        "convert. Use Equals, NotEquals, In, GreaterThan or LessThan conditions and their "
        "And/Or conjunctions.",
        name=child,
    )


def _listed(child: str, parent: str, values: Sequence[Hashable], what: str) -> Condition:
    if not values:
        raise InvalidSpaceError(
            f"The condition {what} can never hold, so {child!r} is never active. Remove "
            f"{child!r} or its condition from the ConfigurationSpace.",
            name=child,
        )
    return Condition(child, parent, values=tuple(values))


def _not_equals(child: str, parent: Parameter, value: Any) -> ConditionLike:
    what = f"{child} | {parent.name} != {value!r}"
    if isinstance(parent, Categorical):
        k = parent.index_of(value)
        return _listed(child, parent.name, (*parent.choices[:k], *parent.choices[k + 1 :]), what)
    if isinstance(parent, Int) or _is_stepped(parent):
        grid = _grid_values(parent)
        if len(grid) <= _MAX_LISTED_VALUES + 1:
            others = [g for g in grid if not math.isclose(g, value, rel_tol=1e-9, abs_tol=1e-12)]
            return _listed(child, parent.name, others, what)
    return AnyOf((Condition(child, parent.name, lt=value), Condition(child, parent.name, gt=value)))


# --------------------------------------------------------------------------------------
# hpinsight -> ConfigSpace
def space_to_configspace(space: SearchSpace, seed: int | None = None) -> Any:
    """Return a ``ConfigSpace.ConfigurationSpace`` (1.x) equivalent to ``space``.

    Parameters
    ----------
    space : SearchSpace
        The space to convert. See the module docstring for what is mapped.
    seed : int, optional
        Seed of the ``ConfigurationSpace``'s random generator.

    Returns
    -------
    ConfigSpace.ConfigurationSpace

    Raises
    ------
    InvalidSpaceError
        If a stepped parameter has more grid values than an ordinal
        hyperparameter should hold, or ConfigSpace rejects a parameter (for
        example categorical choices it considers equal, such as ``True``
        and ``1``).
    """
    CS = import_optional("ConfigSpace", "SearchSpace.to_configspace")
    hps = {p.name: _hp_from_param(CS, p) for p in space.params}
    cs = CS.ConfigurationSpace(seed=seed)
    cs.add(list(hps.values()))
    conditions = []
    for child in space.conditional_names:
        parts = [_cs_from_conditionlike(CS, c, space, hps) for c in space.conditions_of(child)]
        conditions.append(parts[0] if len(parts) == 1 else CS.AndConjunction(*parts))
    if conditions:
        cs.add(conditions)
    return cs


def _hp_from_param(CS: ModuleType, param: Parameter) -> Any:
    info: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}
    if param.default is None:
        info["no_default"] = True
    name = param.name
    try:
        if isinstance(param, Categorical):
            if param.default is not None:
                kwargs["default_value"] = param.choices[param.index_of(param.default)]
            hp = CS.CategoricalHyperparameter(name, list(param.choices), **kwargs, meta=_meta(info))
        elif _is_stepped(param):
            assert isinstance(param, Float | Int)
            grid = _grid_values(param)
            if len(grid) > _MAX_ORDINAL_VALUES:
                raise InvalidSpaceError(
                    f"{type(param).__name__} parameter {name!r} with step {param.step} has "
                    f"{len(grid)} values, more than the {_MAX_ORDINAL_VALUES} that "
                    "to_configspace writes as an OrdinalHyperparameter. Use a coarser step"
                    + (" or step=1." if isinstance(param, Int) else " or no step."),
                    name=name,
                )
            info.update(kind=type(param).__name__, low=param.low, high=param.high, step=param.step)
            if param.default is not None:
                kwargs["default_value"] = grid[_nearest_index(param, param.default)]
            hp = CS.OrdinalHyperparameter(name, grid, **kwargs, meta=_meta(info))
        elif isinstance(param, Int):
            hp = CS.UniformIntegerHyperparameter(
                name,
                param.low,
                param.high,
                default_value=param.default,
                log=param.log,
                meta=_meta(info),
            )
        else:
            hp = CS.UniformFloatHyperparameter(
                name,
                param.low,
                param.high,
                default_value=param.default,
                log=param.log,
                meta=_meta(info),
            )
    except ValueError as exc:
        if isinstance(exc, InvalidSpaceError):
            raise
        raise InvalidSpaceError(
            f"ConfigSpace rejects parameter {name!r}: {exc}. Change the parameter so ConfigSpace "
            "can represent it (e.g. do not mix True/False with 1/0 among categorical choices).",
            name=name,
        ) from exc
    return hp


def _meta(info: dict[str, Any]) -> dict[str, Any] | None:
    return {_META_KEY: info} if info else None


def _nearest_index(param: Float | Int, value: float) -> int:
    assert param.step is not None
    return round((float(value) - param.low) / param.step)


def _cs_from_conditionlike(
    CS: ModuleType, cond: ConditionLike, space: SearchSpace, hps: Mapping[str, Any]
) -> Any:
    if isinstance(cond, Condition):
        return _cs_from_condition(CS, cond, space, hps)
    parts: list[Any] = []
    for part in cond.conditions:
        converted = _cs_from_condition(CS, part, space, hps)
        if isinstance(converted, CS.OrConjunction):
            parts.extend(converted.components)
        else:
            parts.append(converted)
    return parts[0] if len(parts) == 1 else CS.OrConjunction(*parts)


def _cs_from_condition(
    CS: ModuleType, cond: Condition, space: SearchSpace, hps: Mapping[str, Any]
) -> Any:
    child, parent_hp = hps[cond.child], hps[cond.parent]
    parent = space[cond.parent]
    if cond.values is not None:
        values = _legal_values(parent, cond.values)
        if len(values) == 1:
            return CS.EqualsCondition(child, parent_hp, values[0])
        return CS.InCondition(child, parent_hp, values)
    assert not isinstance(parent, Categorical)
    atoms = []
    if cond.gt is not None:
        below = _at_or_below(parent, cond.gt)
        if below is not None:
            atoms.append(CS.GreaterThanCondition(child, parent_hp, below))
    if cond.lt is not None:
        above = _at_or_above(parent, cond.lt)
        if above is not None:
            atoms.append(CS.LessThanCondition(child, parent_hp, above))
    if not atoms:
        # Every value qualifies: the child is active whenever the parent is, i.e. parent >= low.
        low = _grid_values(parent)[0] if _is_stepped(parent) else parent.low
        return CS.OrConjunction(
            CS.EqualsCondition(child, parent_hp, low),
            CS.GreaterThanCondition(child, parent_hp, low),
        )
    return atoms[0] if len(atoms) == 1 else CS.AndConjunction(*atoms)


def _legal_values(parent: Parameter, values: Sequence[Hashable]) -> list[Any]:
    """The parent's own (ConfigSpace-legal) spelling of each condition value, deduplicated."""
    if isinstance(parent, Categorical):
        return [parent.choices[k] for k in dict.fromkeys(parent.index_of(v) for v in values)]
    numbers = [float(v) for v in values]  # type: ignore[arg-type]  # checked by SearchSpace
    if _is_stepped(parent):
        assert isinstance(parent, Float | Int)
        grid = _grid_values(parent)
        return [grid[k] for k in dict.fromkeys(_nearest_index(parent, v) for v in numbers)]
    if isinstance(parent, Int):
        return list(dict.fromkeys(round(v) for v in numbers))
    return list(dict.fromkeys(numbers))


def _at_or_below(parent: Float | Int, bound: float) -> float | int | None:
    """Largest legal parent value ``g <= bound`` (``parent > bound`` iff ``parent > g``)."""
    if _is_stepped(parent):
        below = [g for g in _grid_values(parent) if g <= bound]
        return below[-1] if below else None
    if isinstance(parent, Int):
        floor = math.floor(bound)
        return None if floor < parent.low else min(floor, parent.high)
    return None if bound < parent.low else min(float(bound), parent.high)


def _at_or_above(parent: Float | Int, bound: float) -> float | int | None:
    """Smallest legal parent value ``g >= bound`` (``parent < bound`` iff ``parent < g``)."""
    if _is_stepped(parent):
        above = [g for g in _grid_values(parent) if g >= bound]
        return above[0] if above else None
    if isinstance(parent, Int):
        ceil = math.ceil(bound)
        return None if ceil > parent.high else max(ceil, parent.low)
    return None if bound > parent.high else max(float(bound), parent.low)
